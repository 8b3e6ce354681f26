import type { Queryable } from '../shared/db.ts';
import { statutoryRateBp } from '../law/danish-law.ts';
import type { ReferenceRate } from '../reminders/interest-policy.ts';

/**
 * Nationalbanken's reference rates by half-year (reference_rates, 036_reference_rates.sql): data, not code. Read
 * by every interest posting and by GET /v1/reference-rates; written only by the operator command.
 */

/**
 * Every rate, oldest first (a handful of rows a year). `forPosting`: a transaction that posts interest holds the rows
 * it read (KEY SHARE) until it commits, so the operator cannot replace a rate between that read and the posting.
 */
export async function loadReferenceRates(sql: Queryable, opts: { forPosting?: boolean } = {}): Promise<ReferenceRate[]> {
  const rows = await sql<{ from: string; reference_rate_bp: number }[]>`
    SELECT to_char(from_date, 'YYYY-MM-DD') AS from, reference_rate_bp FROM reference_rates ORDER BY from_date
    ${opts.forPosting ? sql`FOR KEY SHARE` : sql``}`;
  return rows.map((r) => ({ from: r.from, referenceRateBp: r.reference_rate_bp }));
}

/** A rate as GET /v1/reference-rates shows it. */
export const referenceRateView = (r: ReferenceRate) => ({ from: r.from, referenceRateBp: r.referenceRateBp, statutoryRateBp: statutoryRateBp(r.referenceRateBp) });

export type SetReferenceRateOutcome = { outcome: 'created' | 'replaced' | 'unchanged'; previousBp: number | null } | { outcome: 'charged'; previousBp: number; postings: number };

/**
 * Sets the reference rate from a half-year's first day. A new half-year is added; an existing one may be replaced
 * until interest has been posted at it (then the rate is history the invoices were charged with, and stays).
 */
export async function setReferenceRate(sql: Queryable, from: string, referenceRateBp: number): Promise<SetReferenceRateOutcome> {
  const [existing] = await sql<{ reference_rate_bp: number }[]>`SELECT reference_rate_bp FROM reference_rates WHERE from_date = ${from} FOR UPDATE`;
  if (!existing) {
    await sql`INSERT INTO reference_rates (from_date, reference_rate_bp) VALUES (${from}, ${referenceRateBp})`;
    return { outcome: 'created', previousBp: null };
  }
  if (existing.reference_rate_bp === referenceRateBp) return { outcome: 'unchanged', previousBp: referenceRateBp };
  const [charged] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM invoice_fees WHERE rate_from = ${from}`;
  if (charged!.n > 0) return { outcome: 'charged', previousBp: existing.reference_rate_bp, postings: charged!.n };
  await sql`UPDATE reference_rates SET reference_rate_bp = ${referenceRateBp}, updated_at = now() WHERE from_date = ${from}`;
  return { outcome: 'replaced', previousBp: existing.reference_rate_bp };
}
