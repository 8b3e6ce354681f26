import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of a checkout the pay page opened with a payment provider (checkout_sessions.status,
 * 007_payment_links_receipts.sql). It only moves forward, so provider callbacks arriving late or out of order can
 * never undo a payment:
 *
 *   (open) → open → failed → succeeded; open → succeeded; failed → failed (a later failure's reason); succeeded is final.
 */
export const CHECKOUT_STATUSES = ['open', 'failed', 'succeeded'] as const;
export type CheckoutSessionStatus = (typeof CHECKOUT_STATUSES)[number];

/** A new checkout's status (its INSERT); the one a pay page may reuse. */
export const OPEN_CHECKOUT_STATUS = 'open' as const satisfies CheckoutSessionStatus;

export const CHECKOUT_TRANSITIONS = {
  /** The provider reported a failed payment: the reason is kept, a later success still counts. */
  fail: { from: ['open', 'failed'], to: 'failed' },
  /** The provider reported the payment: it is booked and kept as the checkout's payment. */
  succeed: { from: ['open', 'failed'], to: 'succeeded' },
} as const;

export const CHECKOUT_LIFECYCLE = defineLifecycle({
  name: 'checkout',
  table: 'checkout_sessions',
  column: 'status',
  stateNoun: 'status',
  states: CHECKOUT_STATUSES,
  transitions: CHECKOUT_TRANSITIONS,
});

/** Whether a checkout in `status` has its payment: later callbacks are stale. */
export const isCheckoutFinal = (status: CheckoutSessionStatus): boolean => !CHECKOUT_LIFECYCLE.can(status, 'succeed');
