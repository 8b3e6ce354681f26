import { addDays } from '../shared/clock.ts';

/**
 * A payment plan's rules as pure functions (docs/reminders.md, "Payment plans"): how the money received fills the
 * instalments, when an instalment is late, when the plan breaks, and which days of interest it waives. The use cases
 * (create, cancel, the payment that fills it, the dunning step that breaks it) apply them in their transactions.
 *
 * Dates are 'YYYY-MM-DD' business dates (Europe/Copenhagen).
 */

/** An instalment an integrator agreed with the debtor, as stored. */
export interface Installment {
  number: number;
  dueDate: string;
  amountOere: number;
}

export type InstallmentStatus = 'open' | 'paid' | 'late';

export interface InstallmentState extends Installment {
  paidOere: number;
  status: InstallmentStatus;
}

/** Bounds of the list (the contract's): 2..24 instalments of at least 1 kr. */
export const MIN_INSTALLMENTS = 2;
export const MAX_INSTALLMENTS = 24;
export const MIN_INSTALLMENT_OERE = 100;

/** An instalment still not fully paid this many days after its due date breaks the plan on that day. */
export const BREAK_AFTER_DAYS = 10;

/**
 * The money received towards the plan, filled into the instalments in order (the first in full before the second),
 * and each instalment's status on `today`: `paid` when filled, `late` from the day after its due date while not, else
 * `open`.
 */
export function fillInstallments(installments: readonly Installment[], receivedOere: number, today: string): InstallmentState[] {
  let left = Math.max(0, receivedOere);
  return installments.map((i) => {
    const paidOere = Math.min(i.amountOere, left);
    left -= paidOere;
    const status: InstallmentStatus = paidOere >= i.amountOere ? 'paid' : today > i.dueDate ? 'late' : 'open';
    return { ...i, paidOere, status };
  });
}

/** Whether the money received pays every instalment. */
export const allPaid = (installments: readonly Installment[], receivedOere: number): boolean =>
  receivedOere >= installments.reduce((sum, i) => sum + i.amountOere, 0);

/**
 * The day an active plan breaks unless more is paid: the first instalment not fully paid, its due date + 10 days;
 * null when every instalment is paid.
 */
export function breaksOn(installments: readonly Installment[], receivedOere: number): string | null {
  let left = Math.max(0, receivedOere);
  for (const i of installments) {
    if (left < i.amountOere) return addDays(i.dueDate, BREAK_AFTER_DAYS);
    left -= i.amountOere;
  }
  return null;
}

/**
 * The rules of the list the schema cannot say, checked against the organisation's business today: dates strictly
 * increasing and the first not before today. One detail per broken rule, at its item's pointer.
 */
export function installmentErrors(installments: readonly { dueDate: string }[], today: string): { path: string; message: string }[] {
  const errors: { path: string; message: string }[] = [];
  installments.forEach((item, k) => {
    if (k === 0 && item.dueDate < today) errors.push({ path: `/installments/${k}/dueDate`, message: `must not be before today (${today})` });
    const previous = installments[k - 1];
    if (previous && item.dueDate <= previous.dueDate) {
      errors.push({ path: `/installments/${k}/dueDate`, message: `must be after the previous instalment's due date (${previous.dueDate})` });
    }
  });
  return errors;
}

/** A plan as interest reads it: whether it waives interest, and its business dates. */
export interface PlanSpan {
  waiveInterest: boolean;
  createdOn: string;
  /** null while active. */
  endedOn: string | null;
}

/**
 * The days a plan waives interest for (interest-policy.ts's `waived`): with `waiveInterest`, from the day after it was
 * made (the interest up to and including that day was posted when it was made) up to the day before it ended (the
 * day a plan breaks or is cancelled accrues again); open-ended while active. Empty without the waiver, or for a plan
 * made and ended on one day.
 */
export function waivedSpans(plans: readonly PlanSpan[]): { from: string; to: string | null }[] {
  return plans.flatMap((p) => {
    if (!p.waiveInterest) return [];
    const from = addDays(p.createdOn, 1);
    const to = p.endedOn === null ? null : addDays(p.endedOn, -1);
    return to !== null && to < from ? [] : [{ from, to }];
  });
}
