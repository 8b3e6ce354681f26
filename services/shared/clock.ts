/**
 * Business time. Every business rule reads "today" from here, never from Date directly, so that sandbox
 * organisations can later run on a test clock. An organisation's today is the calendar date in Europe/Copenhagen
 * (docs/architecture.md, "Time-driven work").
 */
export interface Clock {
  now(organizationId: string): Promise<Date>;
  today(organizationId: string): Promise<string>;
}

const copenhagenDate = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Copenhagen', year: 'numeric', month: '2-digit', day: '2-digit' });

/** 'YYYY-MM-DD' of an instant in Europe/Copenhagen. */
export const copenhagenToday = (at: Date): string => copenhagenDate.format(at);

export const realClock: Clock = {
  now: async () => new Date(),
  today: async () => copenhagenToday(new Date()),
};

const copenhagenParts = new Intl.DateTimeFormat('en-US', {
  timeZone: 'Europe/Copenhagen', hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
});

/** Copenhagen's offset from UTC at an instant, in milliseconds (+1 h in winter, +2 h in summer). */
function copenhagenOffsetMs(atMs: number): number {
  const p = Object.fromEntries(copenhagenParts.formatToParts(new Date(atMs)).map((x) => [x.type, Number(x.value)]));
  const wall = Date.UTC(p.year!, p.month! - 1, p.day, p.hour, p.minute, p.second);
  return wall - (atMs - (((atMs % 1000) + 1000) % 1000));
}

/**
 * The instant `days` calendar days after `atMs` in Europe/Copenhagen: the same wall-clock time on the date `days`
 * later, so the Copenhagen date moves by exactly `days` whatever daylight saving does in between (24-hour steps
 * would land on the day after when the advance crosses into summer time late in the evening, or on the day before
 * the other way in the first hour after midnight). A wall-clock time the spring change skips (02:00-03:00 on the
 * last Sunday of March) becomes the same number of minutes after 03:00.
 */
export function addCopenhagenDays(atMs: number, days: number): number {
  const wall = atMs + copenhagenOffsetMs(atMs) + days * 86_400_000;
  // The offsets in force a day either side of the target; the instant that reads back as the wall time is the one.
  const before = copenhagenOffsetMs(wall - 86_400_000);
  const after = copenhagenOffsetMs(wall + 86_400_000);
  const fits = [wall - before, wall - after].filter((at) => at + copenhagenOffsetMs(at) === wall);
  // In the autumn's repeated hour both fit: the first of them. In the spring's skipped hour neither does: the
  // winter offset carries the wall time past the gap (02:30 becomes 03:30 summer time).
  return fits.length > 0 ? Math.min(...fits) : wall - before;
}

/** Calendar arithmetic on 'YYYY-MM-DD' strings, in UTC so no time zone can shift a date. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
