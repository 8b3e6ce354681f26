import * as restate from '@restatedev/restate-sdk';
import { WORK, WORKFLOW_SERVICES, type WorkTarget } from '../contracts/workflows.ts';
import { parkWork } from './shared/dispatch.ts';
import { RETENTION, step } from './shared/durable.ts';
import { releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * The past-due announcements of one organisation as days pass (key: the organisation id), `customer.past_due` and
 * `customer.settled` (docs/api-conventions.md, "Customer balance"). Its wake-index row is its schedule: due the day
 * after an invoice's due date, then at each next business day while something is past due, and at once when the
 * thresholds change. One step reconciles the organisation and moves the row, in one transaction
 * (services/customers/past-due-transitions.ts, `announcePastDue`); a step whose retries run out parks the row.
 * Crash story: the step is one transaction, so a crash repeats it whole or not at all, and an announcement is made
 * once (the customers' announced state is in the same transaction).
 */
export const PAST_DUE = WORKFLOW_SERVICES.PastDue;

export interface PastDueActivities extends WakeClaimActivities {
  announcePastDue(organizationId: string): Promise<{ changed: number; next: string | null }>;
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

export type PastDueResult = { changed: number; next: string | null } | { parked: string };

export function createPastDue(activities: PastDueActivities) {
  return restate.object({
    name: PAST_DUE,
    options: RETENTION,
    handlers: {
      wake: releasing('PastDue', activities, async (ctx: restate.ObjectContext): Promise<PastDueResult> => {
        const done = await step(ctx, 'announce', () => activities.announcePastDue(ctx.key), 'database');
        if (done.ok) return done.value;
        await parkWork(ctx, activities, WORK.pastDue(ctx.key), done.failed);
        return { parked: done.failed };
      }),
    },
  });
}

export type PastDue = ReturnType<typeof createPastDue>;
