import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of a payment plan (payment_plans.status, 039_payment_plans.sql; docs/reminders.md, "Payment plans"):
 *
 *   (made) → active → completed   every instalment paid (the payment that fills the last one)
 *                   → broken      an instalment still not fully paid 10 days after its due date (the dunning step)
 *                   → cancelled   POST …/payment-plan/cancel, or a credit note on the invoice
 *
 * Every end is final; a new plan may then be made.
 */
export const PAYMENT_PLAN_STATUSES = ['active', 'completed', 'broken', 'cancelled'] as const;
export type PaymentPlanStatus = (typeof PAYMENT_PLAN_STATUSES)[number];

/** A new plan's status (its INSERT). */
export const NEW_PAYMENT_PLAN_STATUS = 'active' as const satisfies PaymentPlanStatus;

export const PAYMENT_PLAN_TRANSITIONS = {
  complete: { from: ['active'], to: 'completed' },
  break: { from: ['active'], to: 'broken' },
  cancel: { from: ['active'], to: 'cancelled' },
} as const;

export const PAYMENT_PLAN_LIFECYCLE = defineLifecycle({
  name: 'payment plan',
  table: 'payment_plans',
  column: 'status',
  stateNoun: 'status',
  states: PAYMENT_PLAN_STATUSES,
  transitions: PAYMENT_PLAN_TRANSITIONS,
});

export const PAYMENT_PLAN_STATUS = PAYMENT_PLAN_LIFECYCLE.state;

/** The statuses in which a plan has ended and dunning resumes from its end (a completed plan leaves nothing to remind). */
export const RESUMING_PLAN_STATUSES = [PAYMENT_PLAN_STATUS.broken, PAYMENT_PLAN_STATUS.cancelled] as const;
