import * as restate from '@restatedev/restate-sdk';
import { WORK, WORKFLOW_SERVICES, type WorkTarget } from '../contracts/workflows.ts';
import { RETENTION, RETRY, step } from './shared/durable.ts';
import { handOn, releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * Finishes an issue whose request stopped between its two transactions (the API process died while the PDF was
 * rendering, or the renderer failed): the number is reserved and the content frozen, so the issue is completed,
 * never undone. A virtual object keyed by the invoice id, so one invoice is finished by one invocation at a time.
 * The reservation is in the wake index from its commit on; the housekeeping loop pokes `finish` once it is a
 * minute overdue. The finishing step is idempotent (a reservation already finished is left as it is); when it
 * exhausts its retries the reservation's wake-index row is parked with the error, for an operator.
 */
export const INVOICE_ISSUE = WORKFLOW_SERVICES.InvoiceIssue;

export interface InvoiceIssueActivities extends WakeClaimActivities {
  /** Renders, stores and commits the reserved issue; `mail` when the request asked for a send that is now queued. */
  /** `dunning`: the invoice's Dunning key when it was issued already past due (its dunning is due now). */
  finishInvoiceIssue(invoiceId: string): Promise<{ finished: boolean; mail: boolean; dunning: string | null; organizationId?: string }>;
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

export function createInvoiceIssue(activities: InvoiceIssueActivities) {
  return restate.object({
    name: INVOICE_ISSUE,
    options: RETENTION,
    handlers: {
      finish: releasing('InvoiceIssue', activities, async (ctx: restate.ObjectContext): Promise<{ finished: boolean }> => {
        const result = await step(ctx, 'finish', () => activities.finishInvoiceIssue(ctx.key), 'finishIssue');
        if (!result.ok) {
          await ctx.run('park', () => activities.parkWork(WORK.invoiceIssue(ctx.key), result.failed), RETRY.database);
          return { finished: false };
        }
        // The send the request asked for, and the dunning of an invoice issued past due, are due now: the scheduler
        // hands them on. (A result journaled before it named the organisation leaves them to the backstop.)
        const { organizationId } = result.value;
        if ((result.value.mail || result.value.dunning) && organizationId) handOn(ctx, organizationId);
        return { finished: result.value.finished };
      }),
    },
  });
}

export type InvoiceIssue = ReturnType<typeof createInvoiceIssue>;
