import * as restate from '@restatedev/restate-sdk';

/**
 * The receipt of one payment, as a virtual object keyed by the payment id: one rendering at a time per payment. The
 * API (after a manual registration commits), the pay service (after a provider callback books a payment) and the
 * workflows process's sweep send `render`; the step is retried by Restate until it succeeds (the renderer or the
 * database may be down for a while) and is idempotent, so repeated sends render once.
 */
export const PAYMENT_RECEIPT = 'PaymentReceipt';

export interface PaymentReceiptActivities {
  renderPaymentReceipt(paymentId: string): Promise<{ status: string }>;
}

export function createPaymentReceipt(activities: PaymentReceiptActivities) {
  return restate.object({
    name: PAYMENT_RECEIPT,
    handlers: {
      render: async (ctx: restate.ObjectContext): Promise<{ status: string }> =>
        ctx.run('render', () => activities.renderPaymentReceipt(ctx.key), {
          initialRetryInterval: { seconds: 2 },
          retryIntervalFactor: 2,
          maxRetryInterval: { minutes: 10 },
        }),
    },
  });
}

export type PaymentReceipt = ReturnType<typeof createPaymentReceipt>;
