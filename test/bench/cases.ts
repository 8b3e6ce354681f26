/**
 * The `cases` stage's request body and its floor's writes (README, "Collection cases").
 *
 * Each request is a case of 50 claims and 20 debtors with every personal field filled (name, CPR, the whole address,
 * e-mail, mobile; each claim with its invoice date and description), under its own externalReference. The body is
 * about 20 KB of JSON, well under the route's 64 KiB limit.
 */
import { uuidv7 } from '../../services/shared/ids.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import type { Tx } from '../../services/shared/db.ts';

export const CASE_CLAIMS = 50;
export const CASE_DEBTORS = 20;

const day = (date: Date, days: number): string => new Date(date.getTime() + days * 86_400_000).toISOString().slice(0, 10);

export interface CaseBody {
  externalReference: string;
  fordringer: { hovedstolOere: number; forfaldsdato: string; fakturadato: string; beskrivelse: string }[];
  skyldnere: {
    skyldnerType: 'person';
    navn: string;
    cpr: string;
    adresse: { gade: string; postnummer: string; by: string; land: string; darId: string; kommunekode: string };
    email: string;
    mobil: string;
  }[];
}

/** Request `n` of a run: due dates 30–79 days back (due and not time-barred on the organisation's today). */
export function caseBody(runId: string, n: number, now = new Date()): CaseBody {
  return {
    externalReference: `bench-case-${runId}-${n}`,
    fordringer: Array.from({ length: CASE_CLAIMS }, (_, i) => ({
      hovedstolOere: 10_000 + i * 137,
      forfaldsdato: day(now, -30 - i),
      fakturadato: day(now, -44 - i),
      beskrivelse: `Faktura ${100_000 + n * CASE_CLAIMS + i}, husleje og aconto varme`,
    })),
    skyldnere: Array.from({ length: CASE_DEBTORS }, (_, i) => ({
      skyldnerType: 'person' as const,
      navn: `Skyldner ${i + 1} Sørensen-Kastrup`,
      cpr: `${String(1 + (i % 28)).padStart(2, '0')}0780${String(1000 + ((n * CASE_DEBTORS + i) % 9000)).padStart(4, '0')}`,
      adresse: {
        gade: `Inkassovej ${i + 1}, ${(i % 5) + 1}. th.`,
        postnummer: '8000',
        by: 'Aarhus C',
        land: 'Danmark',
        darId: '0a3f507a-b2e6-32b8-e044-0003ba298018',
        kommunekode: '0751',
      },
      email: `skyldner-${i + 1}@privat-eksempel.dk`,
      mobil: `+45${String(20_000_000 + i * 1_111).slice(0, 8)}`,
    })),
  };
}

/**
 * K0, the floor of POST /v1/cases: the rows the route must write, in one transaction, and nothing else. The series
 * row is taken and moved in one statement (a creation still queues on it, as the route's does); then the case, its
 * 50 claims (one INSERT), its 20 debtors (one INSERT, every personal field AES-256-GCM with the same keyring, one
 * ciphertext per field as the app stores them) and the idempotency key's stored response go in one round trip.
 * No auth, validation, idempotency look-up, replay check, body MAC (zeros), event or wake-index row. Answers the
 * response text.
 */
export async function insertCaseFloor(tx: Tx, keyring: Keyring, organizationId: string, idempotencyKey: string, body: CaseBody): Promise<string> {
  const [series] = await tx<{ case_number: number; now: Date }[]>`
    INSERT INTO case_number_series (organization_id, next_number) VALUES (${organizationId}, 2)
    ON CONFLICT (organization_id) DO UPDATE SET next_number = case_number_series.next_number + 1
    RETURNING next_number - 1 AS case_number, now() AS now`;
  const id = uuidv7();
  const { case_number: caseNumber, now } = series!;
  const claims = body.fordringer.map((c, position) => ({
    organization_id: organizationId,
    case_id: id,
    position,
    principal_oere: c.hovedstolOere,
    due_date: c.forfaldsdato,
    invoice_date: c.fakturadato,
    description_enc: keyring.encrypt(c.beskrivelse),
  }));
  const debtors = body.skyldnere.map((d, position) => ({
    organization_id: organizationId,
    case_id: id,
    position,
    debtor_type: d.skyldnerType,
    name_enc: keyring.encrypt(d.navn),
    cvr: null,
    cpr_enc: keyring.encrypt(d.cpr),
    address_enc: keyring.encrypt(JSON.stringify(d.adresse)),
    email_enc: keyring.encrypt(d.email),
    phone_enc: keyring.encrypt(d.mobil),
  }));
  const at = now.toISOString();
  const text = JSON.stringify({
    data: {
      id, caseNumber: Number(caseNumber), externalReference: body.externalReference, fakturaId: null, state: 'OPRETTET', status: 'aktiv',
      paakravFrist: null, eventVersion: 1, createdAt: at, updatedAt: at,
    },
    meta: {},
  });
  await Promise.all([
    tx`INSERT INTO collection_cases ${tx({
      organization_id: organizationId, id, case_number: caseNumber, external_reference: body.externalReference, invoice_id: null,
      state: 'OPRETTET', body_mac: Buffer.alloc(32), created_at: now, updated_at: now,
    } as Record<string, unknown>)}`.execute(),
    tx`INSERT INTO case_claims ${tx(claims as Record<string, unknown>[])}`.execute(),
    tx`INSERT INTO case_debtors ${tx(debtors as Record<string, unknown>[])}`.execute(),
    tx`INSERT INTO idempotency_keys (organization_id, key, request_hash, response_status, response_body, response_location)
       VALUES (${organizationId}, ${idempotencyKey}, ${Buffer.alloc(32)}, 201, ${Buffer.from(text)}, ${`/v1/cases/${id}`})`.execute(),
  ]);
  return text;
}
