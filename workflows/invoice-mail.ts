import * as restate from '@restatedev/restate-sdk';
import { RETENTION } from './shared/durable.ts';
import { WORK, WORKFLOW_SERVICES, type WorkTarget } from '../contracts/workflows.ts';
import { dispatchDocument, parkWork } from './shared/dispatch.ts';
import { releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * The e-mail of one invoice, as a virtual object keyed by the invoice id: its exclusive handler means two sends of
 * one invoice never run at once. The delivery step is retried on transient mail failures under the `mail` policy
 * (backing off from 5 s to 10 min, for about 40 minutes); when retries run out, the send is recorded as failed,
 * which also takes it out of the wake index.
 */
export const INVOICE_MAIL = WORKFLOW_SERVICES.InvoiceMail;

/** The mail step's journaled result: opaque to the workflow, handed to the recording step as it is. */
export type MailAttemptResult = { kind: string } & Record<string, unknown>;

export interface InvoiceMailActivities extends WakeClaimActivities {
  mailInvoice(invoiceId: string): Promise<MailAttemptResult>;
  recordDelivery(kind: 'invoice', invoiceId: string, attempt: MailAttemptResult): Promise<{ status: string; code?: string }>;
  giveUpDelivery(kind: 'invoice', invoiceId: string, reason: string): Promise<{ status: string; code?: string }>;
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

export function createInvoiceMail(activities: InvoiceMailActivities) {
  return restate.object({
    name: INVOICE_MAIL,
    options: RETENTION,
    handlers: {
      deliver: releasing('InvoiceMail', activities, async (ctx: restate.ObjectContext): Promise<{ status: string; code?: string }> => {
        const recorded = await dispatchDocument(ctx, {
          name: (verb) => (verb === 'deliver' ? 'mail' : verb),
          deliver: () => activities.mailInvoice(ctx.key),
          record: (attempt) => activities.recordDelivery('invoice', ctx.key, attempt),
          giveUp: (error) => activities.giveUpDelivery('invoice', ctx.key, error),
        });
        if (recorded.ok) return recorded.recorded!;
        // The database stayed away while the outcome waited to be written: the send stays queued, and its wake-index
        // row is parked so that nobody mails it again before an operator has looked.
        await parkWork(ctx, activities, WORK.invoiceMail(ctx.key), recorded.failed);
        return { status: 'parked' };
      }),
    },
  });
}

export type InvoiceMail = ReturnType<typeof createInvoiceMail>;
