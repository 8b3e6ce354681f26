import type { TermsEvidence, TermsEvidenceCreate } from '../../contracts/terms-evidence.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound, type ErrorDetail } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { recordTimeline } from '../invoices/record-timeline.ts';

/**
 * Terms-acceptance evidence (POST /v1/betingelse-accept; docs/api-conventions.md, "Terms evidence").
 *
 * A record is written once (a trigger refuses UPDATE and DELETE) and de-duplicated by the caller's own
 * `idempotensnoegle`, unique per organisation: the same key with the same content is the stored record again
 * (`replayed`), with other content 409 `evidence_conflict`, whatever Idempotency-Key header carries the request.
 * Two requests racing with one `idempotensnoegle` meet at the unique index: the second waits for the first, inserts
 * nothing, and answers from the first's record. "The same content" compares every field, `accepteretKl` as an
 * instant (`…T12:00:00+02:00` is `…T10:00:00Z`) and `fakturaId` as a UUID (any letter case).
 */
export interface AcceptedTerms {
  evidence: TermsEvidence;
  /** True when an earlier request recorded this evidence (same `idempotensnoegle`, same content). */
  replayed: boolean;
}

interface EvidenceRow {
  id: string;
  invoice_id: string | null;
  external_order_ref: string | null;
  terms_version: string;
  terms_hash: string;
  /** The instant in UTC to the microsecond, `YYYY-MM-DDTHH:MM:SS.ffffff` (to_char), without the `Z`. */
  accepted_utc: string;
  evidence_key: string;
  created_at: Date;
}

const ROW = (sql: Queryable) => sql`
  id, invoice_id, external_order_ref, terms_version, terms_hash,
  to_char(accepted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS accepted_utc, evidence_key, created_at`;

export async function acceptTerms(sql: Queryable, organizationId: string, input: TermsEvidenceCreate): Promise<AcceptedTerms> {
  const accepted = utcInstant(input.accepteretKl);
  if (accepted === undefined) throw instantOutOfRange();
  const wanted = {
    fakturaId: input.fakturaId?.toLowerCase() ?? null,
    eksternOrdreRef: input.eksternOrdreRef ?? null,
    betingelseVersion: input.betingelseVersion,
    betingelseHash: input.betingelseHash,
    accepteretKl: accepted,
  };

  const earlier = await findByKey(sql, organizationId, input.idempotensnoegle);
  if (earlier) return sameOrConflict(earlier, wanted);

  if (wanted.fakturaId !== null) {
    // Share-locked until commit: a draft cannot be deleted between this check and the timeline entry below.
    const [invoice] = await sql`
      SELECT 1 FROM invoices
      WHERE organization_id = ${organizationId} AND id = ${wanted.fakturaId} AND type = 'invoice'
      FOR KEY SHARE`;
    if (!invoice) throw notFound('invoice_not_found', 'invoice');
  }

  const id = uuidv7();
  // The instant goes in as text: a parameter typed timestamptz would pass through a JavaScript Date and lose microseconds.
  const [row] = await sql<EvidenceRow[]>`
    INSERT INTO terms_evidence (organization_id, id, invoice_id, external_order_ref, terms_version, terms_hash, accepted_at, evidence_key)
    VALUES (${organizationId}, ${id}, ${wanted.fakturaId}, ${wanted.eksternOrdreRef}, ${wanted.betingelseVersion},
            ${wanted.betingelseHash}, ${accepted}::text::timestamptz, ${input.idempotensnoegle})
    ON CONFLICT (organization_id, evidence_key) DO NOTHING
    RETURNING ${ROW(sql)}`;
  if (!row) {
    // A concurrent request with this idempotensnoegle committed first (the insert waited for it): its record answers.
    const winner = await findByKey(sql, organizationId, input.idempotensnoegle);
    if (!winner) throw new Error('terms evidence: conflicting record not found after a unique conflict');
    return sameOrConflict(winner, wanted);
  }
  if (wanted.fakturaId !== null) {
    await recordTimeline(sql, organizationId, wanted.fakturaId, 'terms_accepted', { evidenceId: id, betingelseVersion: wanted.betingelseVersion });
  }
  return { evidence: toEvidence(row), replayed: false };
}

async function findByKey(sql: Queryable, organizationId: string, key: string): Promise<EvidenceRow | undefined> {
  const [row] = await sql<EvidenceRow[]>`
    SELECT ${ROW(sql)} FROM terms_evidence WHERE organization_id = ${organizationId} AND evidence_key = ${key}`;
  return row;
}

type Content = Pick<TermsEvidence, 'fakturaId' | 'eksternOrdreRef' | 'betingelseVersion' | 'betingelseHash' | 'accepteretKl'>;

function sameOrConflict(row: EvidenceRow, wanted: Content): AcceptedTerms {
  const evidence = toEvidence(row);
  const differing = (Object.keys(wanted) as (keyof Content)[]).filter((k) => evidence[k] !== wanted[k]);
  if (differing.length === 0) return { evidence, replayed: true };
  const details: ErrorDetail[] = differing.map((k) => ({ path: `/${k}`, message: 'differs from the evidence recorded with this idempotensnoegle' }));
  throw new DomainError(
    'evidence_conflict',
    'Evidence with this idempotensnoegle is already recorded with other content; it is never changed.',
    { details },
  );
}

function toEvidence(row: EvidenceRow): TermsEvidence {
  return {
    id: row.id,
    fakturaId: row.invoice_id,
    eksternOrdreRef: row.external_order_ref,
    betingelseVersion: row.terms_version,
    betingelseHash: row.terms_hash,
    accepteretKl: utcText(row.accepted_utc),
    idempotensnoegle: row.evidence_key,
    createdAt: row.created_at.toISOString(),
  };
}

/** `YYYY-MM-DDTHH:MM:SS.ffffff` in UTC as answered: milliseconds like every time of the API, microseconds if it has them. */
const utcText = (micro: string): string => `${micro.endsWith('000') ? micro.slice(0, -3) : micro}Z`;

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const MIN_MICROS = BigInt(Date.parse('0001-01-01T00:00:00Z')) * 1000n;
const END_MICROS = BigInt(Date.parse('9999-12-31T23:59:59.999Z')) * 1000n + 1000n;

/**
 * An RFC 3339 date-time (already checked by the body's schema: calendar, `Z` or `±hh:mm`) as the UTC instant the
 * API answers with (`…sssZ`, or `…ssssssZ` when it has microseconds). Digits beyond the microsecond are rounded
 * half up, as PostgreSQL keeps microseconds. Undefined when the instant in UTC lies outside the years 0001..9999
 * (`0001-01-01T00:30:00+01:00`, `9999-12-31T23:30:00-01:00`), or the text is not such a date-time.
 */
export function utcInstant(text: string): string | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', sign, oh, om] = m as unknown as [string, string, string, string, string, string, string, string?, string?, string?, string?];
  const local = new Date(0);
  local.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  local.setUTCHours(Number(h), Number(mi), Number(s), 0);
  let micros = BigInt(local.getTime()) * 1000n + BigInt(frac.padEnd(6, '0').slice(0, 6));
  if (frac.length > 6 && frac[6]! >= '5') micros += 1n;
  if (sign) micros -= BigInt((sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om))) * 60_000_000n;
  if (micros < MIN_MICROS || micros >= END_MICROS) return undefined;
  const ms = micros >= 0n ? micros / 1000n : -((-micros + 999n) / 1000n);
  const sub = micros - ms * 1000n;
  const iso = new Date(Number(ms)).toISOString();
  return sub === 0n ? iso : `${iso.slice(0, -1)}${sub.toString().padStart(3, '0')}Z`;
}

export const instantOutOfRange = (): DomainError =>
  new DomainError('validation_failed', '/accepteretKl must be an instant within the years 0001..9999 in UTC.', {
    details: [{ path: '/accepteretKl', message: 'must be an instant within the years 0001..9999 in UTC' }],
  });
