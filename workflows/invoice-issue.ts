import * as restate from '@restatedev/restate-sdk';
import { INVOICE_MAIL, type InvoiceMail } from './invoice-mail.ts';

/**
 * Finishes an issue whose request stopped between its two transactions (the API process died while the PDF was
 * rendering, or the renderer failed): the number is reserved and the content frozen, so the issue is completed,
 * never undone. A virtual object keyed by the invoice id, so one invoice is finished by one invocation at a time.
 * The workflows process's sweep sends `finish` for reservations older than a minute; the finishing step is retried
 * by Restate until it succeeds, and it is idempotent (a reservation already finished is left as it is).
 */
export const INVOICE_ISSUE = 'InvoiceIssue';

export interface InvoiceIssueActivities {
  /** Renders, stores and commits the reserved issue; `mail` when the request asked for a send that is now queued. */
  finishInvoiceIssue(invoiceId: string): Promise<{ finished: boolean; mail: boolean }>;
}

export function createInvoiceIssue(activities: InvoiceIssueActivities) {
  return restate.object({
    name: INVOICE_ISSUE,
    handlers: {
      finish: async (ctx: restate.ObjectContext): Promise<{ finished: boolean }> => {
        const result = await ctx.run('finish', () => activities.finishInvoiceIssue(ctx.key), {
          initialRetryInterval: { seconds: 5 },
          retryIntervalFactor: 2,
          maxRetryInterval: { minutes: 10 },
        });
        // The send the request asked for goes to the mail workflow as a durable one-way call.
        if (result.mail) ctx.objectSendClient<InvoiceMail>({ name: INVOICE_MAIL }, ctx.key).deliver();
        return { finished: result.finished };
      },
    },
  });
}

export type InvoiceIssue = ReturnType<typeof createInvoiceIssue>;
