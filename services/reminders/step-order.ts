/**
 * The order in which one customer's due reminder steps are taken (docs/reminders.md, "Decisions the engine takes",
 * "One customer's steps in a fixed order"), as pure functions: by the step's date; on one date, the invoice with the
 * oldest due date first, then the lowest invoice number. Fees count together in the customer's continuous arrears
 * (at most three), so when the cap leaves fees for only some of the steps of a date, this order, not the order in
 * which the invoices' lifecycles happen to wake, decides which reminders carry them, and with the fees the dates of
 * the reminders after them (10 days after the previous fee-bearing one) and of the demand letters.
 *
 * take-due-dunning-step.ts asks `firstInOrder` under the customer's lock before it takes an invoice's step: a step of
 * another invoice of the customer that comes first is taken first, in the same transaction.
 *
 * Dates are 'YYYY-MM-DD' business dates, so they compare as strings.
 */

/** A reminder step due to be taken, with what orders it among the customer's steps. */
export interface OrderedStep {
  /** The step's planned date. */
  date: string;
  /** Its invoice's due date. */
  dueDate: string;
  /** Its invoice's number (in the organisation's series). */
  number: number;
  /** Its invoice's id: the last tie-break, for two series numbering alike (never the same invoice twice). */
  invoiceId: string;
}

/** < 0 when `a` is taken before `b`, > 0 after, 0 for the same invoice's step on the same date. */
export function compareSteps(a: OrderedStep, b: OrderedStep): number {
  if (a.date !== b.date) return a.date < b.date ? -1 : 1;
  if (a.dueDate !== b.dueDate) return a.dueDate < b.dueDate ? -1 : 1;
  if (a.number !== b.number) return a.number - b.number;
  return a.invoiceId < b.invoiceId ? -1 : a.invoiceId > b.invoiceId ? 1 : 0;
}

/** The step taken first of `steps` (undefined for none). */
export function firstInOrder<T extends OrderedStep>(steps: readonly T[]): T | undefined {
  let first: T | undefined;
  for (const s of steps) if (first === undefined || compareSteps(s, first) < 0) first = s;
  return first;
}
