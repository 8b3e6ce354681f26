import { copenhagenToday } from '../shared/clock.ts';

/**
 * The instant a `since` parameter names: a date-time as given (it carries its offset), or a calendar date read as
 * midnight in Europe/Copenhagen, the organisation's calendar (docs/api-conventions.md, "Events, webhooks and the test
 * clock", Pull feed).
 */
export function sinceInstant(since: string): Date {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(since)) return withinStorableYears(new Date(since));
  const utcMidnight = Date.parse(`${since}T00:00:00Z`);
  // Copenhagen is UTC+1 or UTC+2, and its clocks never skip midnight: one of the two is the first instant of the day.
  for (const hours of [2, 1]) {
    const t = utcMidnight - hours * 3_600_000;
    if (copenhagenToday(new Date(t)) === since && copenhagenToday(new Date(t - 1)) !== since) return new Date(t);
  }
  return new Date(utcMidnight);
}

// An offset can carry a date-time of year 0001 or 9999 into UTC year 0000 or 10000, which no timestamp parameter
// reaches PostgreSQL in. No event lies outside these bounds, so bringing `since` within them filters the same.
const FIRST = Date.parse('0001-01-01T00:00:00.000Z');
const LAST = Date.parse('9999-12-31T23:59:59.999Z');
const withinStorableYears = (d: Date): Date => new Date(Math.min(Math.max(d.getTime(), FIRST), LAST));

/** The smallest UUIDv7 minted at or after `ms`: a lower bound on the ids of events created from then on. */
export function uuidv7Floor(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
}
