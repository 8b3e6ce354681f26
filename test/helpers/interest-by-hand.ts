import { halfYearOf } from '../../services/law/danish-law.ts';
import { addDays } from '../../services/shared/clock.ts';
import { testDb } from './context.ts';

/**
 * Late-payment interest worked out by hand from the rule (docs/reminders.md, "Interest"), not by the service's own
 * module, for the scenarios to compare with: principal × statutory rate × days / 365 per half-year piece, each piece
 * rounded half up on its own.
 */

/** The statutory rate of a day's half-year from the rates table (reference + 8 pp; the latest earlier half-year's when it has none). */
export async function statutoryRateOn(day: string): Promise<number> {
  const [r] = await testDb().db.sql<{ bp: number }[]>`
    SELECT reference_rate_bp + 800 AS bp FROM reference_rates WHERE from_date <= ${halfYearOf(day)}::date ORDER BY from_date DESC LIMIT 1`;
  return r!.bp;
}

/** Interest on a constant principal for the days after `from` up to and including `to`, each half-year rounded on its own. */
export async function interestByHand(principal: number, from: string, to: string): Promise<number> {
  const sums = new Map<string, bigint>();
  for (let d = addDays(from, 1); d <= to; d = addDays(d, 1)) {
    sums.set(halfYearOf(d), (sums.get(halfYearOf(d)) ?? 0n) + BigInt(principal) * BigInt(await statutoryRateOn(d)));
  }
  let total = 0;
  for (const sum of sums.values()) total += Number((2n * sum + 3_650_000n) / 7_300_000n);
  return total;
}
