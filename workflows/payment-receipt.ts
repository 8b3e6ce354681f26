import * as restate from '@restatedev/restate-sdk';
import { RETENTION } from './shared/durable.ts';
import { WORK, WORKFLOW_SERVICES, type WorkTarget } from '../contracts/workflows.ts';
import { dispatchDocument, parkWork } from './shared/dispatch.ts';
import { releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * The receipt of one payment, as a virtual object keyed by the payment id: one rendering at a time per payment. The
 * API (after a manual registration commits), the pay service (after a provider callback books a payment) and the
 * wake index (the request is listed from the payment's commit on) send `render`; the step is idempotent, so
 * repeated sends render once. When the renderer or the database stays down past the retry policy, the request is
 * parked in the wake index with the error.
 */
export const PAYMENT_RECEIPT = WORKFLOW_SERVICES.PaymentReceipt;

export interface PaymentReceiptActivities extends WakeClaimActivities {
  renderPaymentReceipt(paymentId: string): Promise<{ status: string }>;
  /** Records that the work's retries ran out: its wake-index row is parked with the error. */
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

export function createPaymentReceipt(activities: PaymentReceiptActivities) {
  return restate.object({
    name: PAYMENT_RECEIPT,
    options: RETENTION,
    handlers: {
      render: releasing('PaymentReceipt', activities, async (ctx: restate.ObjectContext): Promise<{ status: string }> => {
        // A receipt is stored, not sent: the segment's render step only.
        const done = await dispatchDocument(ctx, { name: (verb) => verb, render: () => activities.renderPaymentReceipt(ctx.key) });
        if (done.ok) return done.rendered!;
        await parkWork(ctx, activities, WORK.paymentReceipt(ctx.key), done.failed);
        return { status: 'parked' };
      }),
    },
  });
}

export type PaymentReceipt = ReturnType<typeof createPaymentReceipt>;
