/**
 * A subscription's billing periods, as pure calendar arithmetic on `YYYY-MM-DD` dates (docs/api-conventions.md,
 * "Subscriptions", Periods). No clock, no database: callers pass "today" (the organisation's business date) where a
 * rule needs it.
 *
 * - Period k (k = 0, 1, …) starts on startDate + k × interval and ends the day before period k + 1 starts. A week is
 *   7 days; months and years are counted from the start, never from the previous period, and clamp to the month's
 *   last day: a 31 January monthly start gives 28/29 February, 31 March, 30 April, …; a 29 February yearly start
 *   gives 28 February in common years and 29 February again in leap years.
 * - The count is 1..24 of the unit.
 * - A period whose start is after `endDate` never comes (its end is not cut at `endDate`: billing is in advance and
 *   the last period is billed whole). A start beyond 9999-12-31, which no API date can carry, never comes either.
 * - **The anchor.** A PATCH may give a subscription a new interval from `nextInvoiceDate` on: that date stays, and
 *   later periods follow the new interval counted from it. So a schedule is described by an anchor — period
 *   `anchorPeriod` starts on `anchorDate` — and period k ≥ anchorPeriod starts on anchorDate + (k − anchorPeriod) ×
 *   interval. A subscription that never changed its interval has the anchor (startDate, 0). Periods before the
 *   anchor are history (they have run receipts or were skipped); the functions here refuse or ignore them.
 *
 * Period indexes keep counting across an interval change, so a period is named by the same k before and after it.
 */

export type IntervalUnit = 'week' | 'month' | 'year';

export interface Interval {
  unit: IntervalUnit;
  /** 1..24 */
  count: number;
}

/** What the period arithmetic needs of a subscription. */
export interface PeriodSchedule {
  /** Period `anchorPeriod` starts on this date; later ones follow `interval` from it. */
  anchorDate: string;
  anchorPeriod: number;
  interval: Interval;
  /** The last day a period may start on; null for no end. */
  endDate: string | null;
}

export interface Period {
  index: number;
  start: string;
  end: string;
}

/** The last date the API can carry. */
export const MAX_DATE = '9999-12-31';

// Four digits from the API; arithmetic may run past year 9999 (such a period never comes).
const DATE_RE = /^(\d{4,})-(\d{2})-(\d{2})$/;

interface Ymd {
  y: number;
  m: number;
  d: number;
}

function parse(date: string): Ymd {
  const m = DATE_RE.exec(date);
  if (!m) throw new RangeError(`not a date: ${date}`);
  const ymd = { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) };
  if (ymd.m < 1 || ymd.m > 12 || ymd.d < 1 || ymd.d > daysInMonth(ymd.y, ymd.m)) throw new RangeError(`not a date: ${date}`);
  return ymd;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
const format = ({ y, m, d }: Ymd): string => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

export function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (integer arithmetic, valid for every year the API takes). */
function toDays({ y, m, d }: Ymd): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function fromDays(days: number): Ymd {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

/** Orders two dates (negative, 0, positive), also past year 9999 where text order would not. */
export function compareDates(a: string, b: string): number {
  return toDays(parse(a)) - toDays(parse(b));
}

/** `date` plus `days` days (negative to go back). */
export function addDays(date: string, days: number): string {
  return format(fromDays(toDays(parse(date)) + days));
}

/** Whole days from `a` to `b` (b − a). */
export function daysBetween(a: string, b: string): number {
  return toDays(parse(b)) - toDays(parse(a));
}

/**
 * `date` + n × interval (n ≥ 0), counted from `date` itself: months and years land on the same day of the month, or
 * the month's last day when it is shorter.
 */
export function addIntervals(date: string, interval: Interval, n: number): string {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`interval multiple must be a whole number ≥ 0: ${n}`);
  const start = parse(date);
  if (interval.unit === 'week') return format(fromDays(toDays(start) + 7 * interval.count * n));
  const months = (interval.unit === 'year' ? 12 : 1) * interval.count * n;
  const index = start.y * 12 + (start.m - 1) + months;
  const y = Math.floor(index / 12);
  const m = (index % 12) + 1;
  return format({ y, m, d: Math.min(start.d, daysInMonth(y, m)) });
}

/** The anchor of a subscription that never changed its interval: period 0 starts on `startDate`. */
export function scheduleOf(startDate: string, interval: Interval, endDate: string | null): PeriodSchedule {
  return { anchorDate: startDate, anchorPeriod: 0, interval, endDate };
}

function assertFromAnchor(s: PeriodSchedule, k: number): void {
  if (!Number.isInteger(k) || k < s.anchorPeriod) {
    throw new RangeError(`period ${k} is before the schedule's anchor period ${s.anchorPeriod}`);
  }
}

/** The start of period k (k ≥ anchorPeriod), whether or not it comes (see `periodComes`). */
export function periodStart(s: PeriodSchedule, k: number): string {
  assertFromAnchor(s, k);
  return addIntervals(s.anchorDate, s.interval, k - s.anchorPeriod);
}

/** The last day of period k: the day before period k + 1 starts. */
export function periodEnd(s: PeriodSchedule, k: number): string {
  return addDays(periodStart(s, k + 1), -1);
}

export function period(s: PeriodSchedule, k: number): Period {
  return { index: k, start: periodStart(s, k), end: periodEnd(s, k) };
}

/** Whether period k comes at all: its start is on or before `endDate` (and a date the API can carry). */
export function periodComes(s: PeriodSchedule, k: number): boolean {
  const start = periodStart(s, k);
  return compareDates(start, MAX_DATE) <= 0 && (s.endDate === null || compareDates(start, s.endDate) <= 0);
}

/**
 * The index of the period containing `date` (start ≤ date ≤ end), counted under this schedule; null when `date` is
 * before the anchor. It does not look at `endDate`: pair it with `periodComes`.
 */
export function periodOf(s: PeriodSchedule, date: string): number | null {
  if (compareDates(date, s.anchorDate) < 0) return null;
  const a = parse(s.anchorDate);
  const t = parse(date);
  // An estimate from whole units, then corrected: clamping moves a start by at most a few days.
  let n: number;
  if (s.interval.unit === 'week') n = Math.floor((toDays(t) - toDays(a)) / (7 * s.interval.count));
  else {
    const months = (t.y - a.y) * 12 + (t.m - a.m);
    n = Math.max(0, Math.floor(months / ((s.interval.unit === 'year' ? 12 : 1) * s.interval.count)));
  }
  while (n > 0 && compareDates(addIntervals(s.anchorDate, s.interval, n), date) > 0) n--;
  while (compareDates(addIntervals(s.anchorDate, s.interval, n + 1), date) <= 0) n++;
  return s.anchorPeriod + n;
}

/**
 * The first period k ≥ max(fromK, anchorPeriod) that starts on or after `date`; null when that period never comes
 * (after `endDate`). Resume uses it with the resume date: the periods that started while paused are skipped.
 */
export function nextPeriodOnOrAfter(s: PeriodSchedule, date: string, fromK: number = s.anchorPeriod): number | null {
  const containing = periodOf(s, date);
  let k: number;
  if (containing === null) k = s.anchorPeriod;
  else k = periodStart(s, containing) === date ? containing : containing + 1;
  k = Math.max(k, fromK, s.anchorPeriod);
  return periodComes(s, k) ? k : null;
}

/**
 * The periods from `fromK` on that are due on `today`: each that comes and starts on or before `today`, oldest
 * first, at most `limit` of them. The run and the schedule's catch-up take them in this order; with `fromK` =
 * the subscription's next period, its length (without a limit) is `periodsBehind`.
 */
export function periodsDue(s: PeriodSchedule, fromK: number, today: string, limit = Number.POSITIVE_INFINITY): Period[] {
  const out: Period[] = [];
  for (let k = Math.max(fromK, s.anchorPeriod); out.length < limit; k++) {
    if (!periodComes(s, k)) break;
    const p = period(s, k);
    if (p.start > today) break;
    out.push(p);
  }
  return out;
}

/**
 * How many periods from `fromK` on are due on `today` (`periodsDue(…).length`, computed without listing them: a
 * weekly subscription started years ago is counted at once).
 */
export function countPeriodsDue(s: PeriodSchedule, fromK: number, today: string): number {
  const from = Math.max(fromK, s.anchorPeriod);
  let last = periodOf(s, today);
  if (last === null) return 0;
  const final = lastPeriod(s);
  if (final !== null) last = Math.min(last, final);
  return Math.max(0, last - from + 1);
}

/** The index of the last period that comes (null while there is no `endDate`). */
export function lastPeriod(s: PeriodSchedule): number | null {
  if (s.endDate === null) {
    return periodComes(s, s.anchorPeriod) ? null : s.anchorPeriod - 1;
  }
  const k = periodOf(s, s.endDate);
  if (k === null) return s.anchorPeriod - 1;
  let last = k;
  while (last >= s.anchorPeriod && !periodComes(s, last)) last--;
  return last;
}

/**
 * The schedule after the interval changes to `interval` from period `nextK` on (a PATCH; `nextK` is the first period
 * without a run receipt): period `nextK` keeps its start, later periods follow the new interval counted from it.
 */
export function rebase(s: PeriodSchedule, nextK: number, interval: Interval): PeriodSchedule {
  return { anchorDate: periodStart(s, nextK), anchorPeriod: nextK, interval, endDate: s.endDate };
}
