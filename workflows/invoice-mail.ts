import * as restate from '@restatedev/restate-sdk';

/**
 * The e-mail of one invoice, as a virtual object keyed by the invoice id: its exclusive handler means two sends of
 * one invoice never run at once. The delivery step is retried by Restate on transient mail failures (backing off
 * from 5 s to 10 min, for about 40 minutes); when retries run out, the send is recorded as failed.
 */
export const INVOICE_MAIL = 'InvoiceMail';

/** The mail step's journaled result: opaque to the workflow, handed to the recording step as it is. */
export type MailAttemptResult = { kind: string } & Record<string, unknown>;

export interface InvoiceMailActivities {
  mailInvoice(invoiceId: string): Promise<MailAttemptResult>;
  recordInvoiceMail(invoiceId: string, attempt: MailAttemptResult): Promise<{ status: string; code?: string }>;
  markInvoiceMailUndeliverable(invoiceId: string, reason: string): Promise<{ status: string; code?: string }>;
}

export function createInvoiceMail(activities: InvoiceMailActivities) {
  return restate.object({
    name: INVOICE_MAIL,
    handlers: {
      deliver: async (ctx: restate.ObjectContext): Promise<{ status: string; code?: string }> => {
        let attempt: MailAttemptResult;
        try {
          // Mailing and recording are separate steps: once the mail server has taken the mail, that fact is in the
          // journal, and a failure while recording it retries the recording only, never the mail.
          attempt = await ctx.run('mail', () => activities.mailInvoice(ctx.key), {
            initialRetryInterval: { seconds: 5 },
            retryIntervalFactor: 2,
            maxRetryInterval: { minutes: 10 },
            maxRetryAttempts: 10,
          });
        } catch (err) {
          if (!(err instanceof restate.TerminalError)) throw err;
          return ctx.run('give-up', () => activities.markInvoiceMailUndeliverable(ctx.key, err.message));
        }
        return ctx.run('record', () => activities.recordInvoiceMail(ctx.key, attempt));
      },
    },
  });
}

export type InvoiceMail = ReturnType<typeof createInvoiceMail>;
