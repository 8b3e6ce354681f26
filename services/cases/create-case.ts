import type { CaseCreate, CaseStatusView } from '../../contracts/cases.ts';
import { WORK } from '../../contracts/workflows.ts';
import { scheduleWake } from '../clock/wake-index.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, type ErrorDetail } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { canonicalJson } from '../idempotency/request-fingerprint.ts';
import { recordEvent } from '../events/record-event.ts';
import { isTimeBarred, LIMITATION_YEARS } from '../law/danish-law.ts';
import { caseStatusOf, INITIAL_CASE_STATE } from './case-lifecycle.ts';
import { findCaseStatusRow, toCaseStatus } from './case-queries.ts';

export interface CreatedCase {
  /** false: a case with this externalReference and the same body existed already, and this is it. */
  created: boolean;
  view: CaseStatusView;
}

/**
 * The keyed MAC of a create body in canonical form (key order does not matter): a repeat with the same
 * externalReference is compared by it, so nothing stored has to be decrypted, and the MAC (unlike a plain hash of a
 * body holding a CPR number) cannot be tested against guessed bodies without the key.
 */
export const caseBodyMac = (keyring: Keyring, organizationId: string, input: CaseCreate): Buffer =>
  keyring.mac(`case-body\n${organizationId}\n${canonicalJson(input)}`);

/**
 * The claims' due dates against the organisation's today (docs/api-conventions.md, "Collection cases"): one 3 years or
 * more back is time-barred (Forældelsesloven § 3, the rule the dunning engine uses), one today or later is not due. The
 * first refused claim decides the code; `details` points at every claim refused for that reason.
 */
export function assertClaimsCollectable(input: CaseCreate, today: string): void {
  const refusals = input.fordringer.map((claim, i) => {
    const path = `/fordringer/${i}/forfaldsdato`;
    if (isTimeBarred(claim.forfaldsdato, today)) {
      return { code: 'claim_time_barred' as const, detail: { path, message: `is ${LIMITATION_YEARS} years or more before today (${today}): the claim is time-barred` } };
    }
    if (claim.forfaldsdato >= today) {
      return { code: 'invoice_not_due' as const, detail: { path, message: `is not before today (${today}): the claim is not due yet` } };
    }
    return undefined;
  });
  const first = refusals.find((r) => r !== undefined);
  if (!first) return;
  const details: ErrorDetail[] = refusals.filter((r) => r?.code === first.code).map((r) => r!.detail);
  throw first.code === 'claim_time_barred'
    ? new DomainError('claim_time_barred', `A claim is time-barred: its due date is ${LIMITATION_YEARS} years or more before today.`, { details })
    : new DomainError('invoice_not_due', 'A claim is not due yet: its due date is today or later.', { details });
}

/**
 * POST /v1/cases, in the caller's transaction: a new case in OPRETTET with its claims, its debtors (personal data
 * encrypted) and `sag.oprettet`, or the existing case of this externalReference when the body is the same.
 *
 * The organisation's case number series row is locked first, so one organisation's creations run one at a time: the
 * look-up of the externalReference that follows sees every case committed before, two racing creations with one
 * reference make one case, and a number is taken only by a creation that commits (no gaps).
 */
export async function createCase(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  input: CaseCreate,
  now: Date,
): Promise<CreatedCase> {
  // The CPU work (the body's MAC, one ciphertext per personal field) is done before the series row is locked, so
  // one organisation's creations, which queue on that lock, do not wait for each other's encryption.
  const mac = caseBodyMac(keyring, organizationId, input);
  const id = uuidv7();
  const enc = (value: string | undefined): Buffer | null => (value === undefined ? null : keyring.encrypt(value));
  const claims = input.fordringer.map((c, position) => ({
    organization_id: organizationId,
    case_id: id,
    position,
    principal_oere: c.hovedstolOere,
    due_date: c.forfaldsdato,
    invoice_date: c.fakturadato ?? null,
    description_enc: enc(c.beskrivelse),
  }));
  const debtors = input.skyldnere.map((d, position) => ({
    organization_id: organizationId,
    case_id: id,
    position,
    debtor_type: d.skyldnerType,
    name_enc: keyring.encrypt(d.navn),
    cvr: d.cvr ?? null,
    cpr_enc: enc(d.cpr),
    address_enc: d.adresse === undefined ? null : keyring.encrypt(JSON.stringify(d.adresse)),
    email_enc: enc(d.email),
    phone_enc: enc(d.mobil),
  }));

  const [series] = await sql<{ next_number: number; today: string }[]>`
    INSERT INTO case_number_series (organization_id, next_number) VALUES (${organizationId}, 1)
    ON CONFLICT (organization_id) DO UPDATE SET next_number = case_number_series.next_number
    RETURNING next_number, business_today(${organizationId})::text AS today`;
  const [existing] = await findCaseStatusRow(sql, organizationId, { externalReference: input.externalReference });
  if (existing) {
    if (existing.body_mac && existing.body_mac.equals(mac)) return { created: false, view: toCaseStatus(existing) };
    throw new DomainError('case_conflict', 'A case with this externalReference exists with a different body.', {
      details: [{ path: '/externalReference', message: 'is the reference of another case' }],
    });
  }
  assertClaimsCollectable(input, series!.today);

  const caseNumber = series!.next_number;
  const state = INITIAL_CASE_STATE;
  // Every write in one round trip: the statements are pipelined on the transaction's connection and run in order
  // (the case before its claims and debtors, whose foreign keys need it).
  const [, , , , , event] = await Promise.all([
    sql`UPDATE case_number_series SET next_number = ${caseNumber + 1} WHERE organization_id = ${organizationId}`.execute(),
    sql`
    INSERT INTO collection_cases ${sql({
      organization_id: organizationId,
      id,
      case_number: caseNumber,
      external_reference: input.externalReference,
      invoice_id: null,
      state,
      body_mac: mac,
      created_at: now,
      updated_at: now,
    } as Record<string, unknown>)}`.execute(),
    // The case's lifecycle (workflows/case.ts) begins at once: its wake-index row is due now.
    scheduleWake(sql, organizationId, WORK.collectionCase(organizationId, id), now),
    sql`INSERT INTO case_claims ${sql(claims as Record<string, unknown>[])}`.execute(),
    sql`INSERT INTO case_debtors ${sql(debtors as Record<string, unknown>[])}`.execute(),
    recordEvent(sql, {
      organizationId,
      type: 'sag.oprettet',
      entityId: id,
      data: { caseNumber, state, status: caseStatusOf(state), fakturaId: null, externalReference: input.externalReference },
    }),
  ]);
  return {
    created: true,
    view: toCaseStatus({
      id,
      case_number: caseNumber,
      external_reference: input.externalReference,
      invoice_id: null,
      state,
      paakrav_frist: null,
      event_version: event.sekvensnummer,
      created_at: now,
      updated_at: now,
    }),
  };
}
