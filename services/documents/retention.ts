/**
 * How long a document is kept (Bogføringsloven § 12): five years from the end of the financial year the document
 * belongs to. Organisations have no financial-year setting, so every financial year is the calendar year and ends on
 * 31 December; a document belongs to the year of the day it was made (its date in Europe/Copenhagen).
 */

/** The last day a document dated `documentDate` ('YYYY-MM-DD') must be kept: 31 December five years after its year. */
export function retainUntil(documentDate: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(documentDate);
  if (!m) throw new TypeError(`a document date is YYYY-MM-DD, got ${JSON.stringify(documentDate)}`);
  return `${Number(m[1]) + 5}-12-31`;
}

/**
 * The Object Lock retain-until instant for a last day of retention: the start of the next day in UTC, which is after
 * the end of that day in Copenhagen (UTC+1, UTC+2 in summer), so the lock never ends before the period does.
 */
export function lockUntil(lastDay: string): Date {
  const day = new Date(`${lastDay}T00:00:00Z`);
  if (Number.isNaN(day.getTime())) throw new TypeError(`not a date: ${JSON.stringify(lastDay)}`);
  return new Date(day.getTime() + 24 * 60 * 60 * 1000);
}
