import * as restate from '@restatedev/restate-sdk';
import { WORK, WORKFLOW_SERVICES, type WorkTarget } from '../contracts/workflows.ts';
import { RETRY, step } from './shared/durable.ts';

/**
 * The e-mail of one invoice, as a virtual object keyed by the invoice id: its exclusive handler means two sends of
 * one invoice never run at once. The delivery step is retried on transient mail failures under the `mail` policy
 * (backing off from 5 s to 10 min, for about 40 minutes); when retries run out, the send is recorded as failed,
 * which also takes it out of the wake index.
 */
export const INVOICE_MAIL = WORKFLOW_SERVICES.InvoiceMail;

/** The mail step's journaled result: opaque to the workflow, handed to the recording step as it is. */
export type MailAttemptResult = { kind: string } & Record<string, unknown>;

export interface InvoiceMailActivities {
  mailInvoice(invoiceId: string): Promise<MailAttemptResult>;
  recordInvoiceMail(invoiceId: string, attempt: MailAttemptResult): Promise<{ status: string; code?: string }>;
  markInvoiceMailUndeliverable(invoiceId: string, reason: string): Promise<{ status: string; code?: string }>;
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

export function createInvoiceMail(activities: InvoiceMailActivities) {
  return restate.object({
    name: INVOICE_MAIL,
    handlers: {
      deliver: async (ctx: restate.ObjectContext): Promise<{ status: string; code?: string }> => {
        // Mailing and recording are separate steps: once the mail server has taken the mail, that fact is in the
        // journal, and a failure while recording it retries the recording only, never the mail.
        const attempt = await step(ctx, 'mail', () => activities.mailInvoice(ctx.key), 'mail');
        const recorded = attempt.ok
          ? await step(ctx, 'record', () => activities.recordInvoiceMail(ctx.key, attempt.value), 'database')
          : await step(ctx, 'give-up', () => activities.markInvoiceMailUndeliverable(ctx.key, attempt.failed), 'database');
        if (recorded.ok) return recorded.value;
        // The database stayed away while the outcome waited to be written: the send stays queued, and its wake-index
        // row is parked so that nobody mails it again before an operator has looked.
        await ctx.run('park', () => activities.parkWork(WORK.invoiceMail(ctx.key), recorded.failed), RETRY.database);
        return { status: 'parked' };
      },
    },
  });
}

export type InvoiceMail = ReturnType<typeof createInvoiceMail>;
