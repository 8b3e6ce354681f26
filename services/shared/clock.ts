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

/** Calendar arithmetic on 'YYYY-MM-DD' strings, in UTC so no time zone can shift a date. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
