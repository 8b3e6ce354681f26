import * as restate from '@restatedev/restate-sdk';

/**
 * The e-mail of one invoice, as a virtual object keyed by the invoice id: its exclusive handler means two sends of
 * one invoice never run at once. The delivery step is retried by Restate on transient mail failures (backing off
 * from 5 s to 10 min, for about 40 minutes); when retries run out, the send is recorded as failed.
 */
export const INVOICE_MAIL = 'InvoiceMail';

export interface InvoiceMailActivities {
  deliverInvoiceMail(invoiceId: string): Promise<{ status: string; code?: string }>;
  markInvoiceMailUndeliverable(invoiceId: string, reason: string): Promise<{ status: string; code?: string }>;
}

export function createInvoiceMail(activities: InvoiceMailActivities) {
  return restate.object({
    name: INVOICE_MAIL,
    handlers: {
      deliver: async (ctx: restate.ObjectContext): Promise<{ status: string; code?: string }> => {
        try {
          return await ctx.run('deliver', () => activities.deliverInvoiceMail(ctx.key), {
            initialRetryInterval: { seconds: 5 },
            retryIntervalFactor: 2,
            maxRetryInterval: { minutes: 10 },
            maxRetryAttempts: 10,
          });
        } catch (err) {
          if (!(err instanceof restate.TerminalError)) throw err;
          return ctx.run('give-up', () => activities.markInvoiceMailUndeliverable(ctx.key, err.message));
        }
      },
    },
  });
}

export type InvoiceMail = ReturnType<typeof createInvoiceMail>;
