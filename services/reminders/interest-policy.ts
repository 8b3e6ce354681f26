import { addDays } from '../shared/clock.ts';
import { halfYearOf, INTEREST_DAYS_PER_YEAR, nextHalfYear, statutoryRateBp, timeBarredOn } from '../law/danish-law.ts';

/**
 * Late-payment interest (renteloven §§ 3 and 5), as pure arithmetic over dates and øre: which days accrue, on what
 * principal, at which rate, and how the days of one posting are cut into pieces and rounded. Exact: sums of
 * principal × rate are integers (BigInt), divided once per piece and rounded half up; no floating point touches money.
 *
 * The rules (docs/reminders.md, "Interest"):
 * - Day d accrues when d is after the due date and before the claim is time-barred (due date + 3 years), on the
 *   principal outstanding at the end of day d − 1, at the statutory rate of the half-year containing d, as
 *   principal × rateBp / 10 000 / 365.
 * - The principal is the invoice's gross less what paid and credited it, never below 0: payments pay principal first,
 *   and a payment or credit note dated d lowers it from day d + 1 (day d still accrues on the amount before it).
 * - A posting covers the days after the previous posting (or after the due date) up to and including its date; the
 *   days of each half-year form one piece, rounded on their own; a piece of 0 øre is not posted.
 * - Days inside a waiver (a payment plan active with `waiveInterest`) do not accrue.
 */

/** Nationalbanken's reference rate from the first day of a half-year (a 1 January or 1 July), in basis points. */
export interface ReferenceRate {
  from: string;
  referenceRateBp: number;
}

/** What lowers the principal: a payment or a credit note, dated. */
export interface PrincipalReduction {
  date: string;
  amountOere: number;
}

export interface InterestFacts {
  dueDate: string;
  /** The invoice's gross: its principal before anything paid or credited it. */
  grossOere: number;
  reductions: readonly PrincipalReduction[];
  /** The last day an earlier posting covered; null before the first posting. */
  postedThrough: string | null;
  /** Spans whose days do not accrue (a payment plan active with waiveInterest), inclusive; `to` null: still open. */
  waived?: readonly { from: string; to: string | null }[];
}

/** One half-year's share of a posting. */
export interface InterestPiece {
  /** The piece's first and last accruing day. */
  fromDate: string;
  toDate: string;
  /** The statutory rate of its half-year (reference + 8 percentage points), in basis points. */
  rateBp: number;
  /** The reference rate row it came from: the half-year's own, or the latest earlier one. */
  rateFrom: string;
  /** Rounded half up to whole øre; never 0 (a piece of 0 is not posted). */
  amountOere: number;
}

/** The reference rate in force for the half-year starting `halfYear`: its own, else the latest earlier one. */
export function referenceRateFor(rates: readonly ReferenceRate[], halfYear: string): ReferenceRate | null {
  let found: ReferenceRate | null = null;
  for (const r of rates) if (r.from <= halfYear && (found === null || r.from > found.from)) found = r;
  return found;
}

const DENOMINATOR = 10_000n * BigInt(INTEREST_DAYS_PER_YEAR);

/** n / DENOMINATOR rounded half up (n ≥ 0). */
const roundHalfUp = (n: bigint): number => Number((2n * n + DENOMINATOR) / (2n * DENOMINATOR));

/**
 * The pieces a posting dated `through` books: every accruing day after the last posting up to and including
 * `through`, grouped by half-year. A half-year with no reference rate known (none on or before it) does not accrue:
 * the operator adds its rate (docs/operations.md, `set-reference-rate`).
 */
export function interestPieces(facts: InterestFacts, rates: readonly ReferenceRate[], through: string): InterestPiece[] {
  const first = facts.postedThrough !== null && facts.postedThrough > facts.dueDate ? addDays(facts.postedThrough, 1) : addDays(facts.dueDate, 1);
  const barred = timeBarredOn(facts.dueDate);
  const last = through < barred ? through : addDays(barred, -1);
  if (first > last) return [];
  const reductions = [...facts.reductions].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  // The principal at the end of the day before `first`.
  let principal = facts.grossOere;
  let next = 0;
  const dayBefore = addDays(first, -1);
  while (next < reductions.length && reductions[next]!.date <= dayBefore) principal -= reductions[next++]!.amountOere;
  const waived = facts.waived ?? [];
  const pieces: InterestPiece[] = [];
  let half = halfYearOf(first);
  let piece: { from: string | null; to: string | null; sum: bigint; rate: Rate | null } = { from: null, to: null, sum: 0n, rate: rateOf(rates, half) };
  const close = () => {
    if (piece.from !== null && piece.rate !== null) {
      const amountOere = roundHalfUp(piece.sum);
      if (amountOere > 0) pieces.push({ fromDate: piece.from, toDate: piece.to!, rateBp: piece.rate.bp, rateFrom: piece.rate.from, amountOere });
    }
  };
  for (let day = first; day <= last; day = addDays(day, 1)) {
    if (halfYearOf(day) !== half) {
      close();
      half = halfYearOf(day);
      piece = { from: null, to: null, sum: 0n, rate: rateOf(rates, half) };
    }
    const owed = Math.max(0, principal);
    const isWaived = waived.some((w) => w.from <= day && (w.to === null || day <= w.to));
    if (!isWaived && owed > 0 && piece.rate !== null) {
      piece.from ??= day;
      piece.to = day;
      piece.sum += BigInt(owed) * BigInt(piece.rate.bp);
    }
    // What is dated today lowers the principal from tomorrow.
    while (next < reductions.length && reductions[next]!.date <= day) principal -= reductions[next++]!.amountOere;
  }
  close();
  return pieces;
}

interface Rate {
  bp: number;
  from: string;
}

function rateOf(rates: readonly ReferenceRate[], half: string): Rate | null {
  const r = referenceRateFor(rates, half);
  return r === null ? null : { bp: statutoryRateBp(r.referenceRateBp), from: r.from };
}

/** The half-years a span of dates touches, first days in order (for reading the rates a posting needs). */
export function halfYearsBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let h = halfYearOf(from); h <= to; h = nextHalfYear(h)) out.push(h);
  return out;
}
