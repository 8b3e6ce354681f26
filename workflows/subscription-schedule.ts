import * as restate from '@restatedev/restate-sdk';
import { WORK, WORKFLOW_SERVICES, parseSubscriptionKey, type WorkTarget } from '../contracts/workflows.ts';
import type { ScheduledRun } from '../services/subscriptions/run-period.ts';
import { RETENTION, RETRY, step } from './shared/durable.ts';
import { handOn, releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * A subscription's durable schedule, as a virtual object keyed by `<organisation>:<subscription>`. It holds no timer
 * and no state: the subscription's wake-index row is its schedule (services/subscriptions/schedule-subscription.ts),
 * due at the start of `nextInvoiceDate` in Europe/Copenhagen and moved by each run, and PostgreSQL holds what was run
 * (the run receipts). The BusinessClock pokes it when the row comes due (a test clock advance included), the API after
 * a create, resume or PATCH that made a period due.
 *
 * One wake runs every due period, oldest first, each as steps of its own (catch-up): `run-i` reserves the period's
 * invoice with its receipt under the subscription's lease (the same use case as POST …/run), `issue-i` renders and
 * commits the issue, and a send the subscription asked for goes to InvoiceMail. When no period is due, the run step
 * has already moved the row to the next period's start (or cleared it, or ended the subscription).
 *
 * A crash anywhere repeats only what was not journaled: a period reserved but not journaled has its receipt, so the
 * repeated `run-i` takes the next period (or finds none); its invoice is finished by the InvoiceIssue object from the
 * reservation's own wake-index row. So one invoice per period, none skipped.
 */
export const SUBSCRIPTION_SCHEDULE = WORKFLOW_SERVICES.SubscriptionSchedule;

export interface SubscriptionScheduleActivities extends WakeClaimActivities {
  runSubscriptionPeriod(organizationId: string, subscriptionId: string): Promise<ScheduledRun>;
  finishInvoiceIssue(invoiceId: string): Promise<{ finished: boolean; mail: boolean; dunning: string | null; organizationId?: string }>;
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

/** Periods one wake runs at most before it hands the rest to a fresh invocation (a short journal per invocation). */
const PERIODS_PER_WAKE = 12;

export type SubscriptionScheduleResult = { periods: number; ended: 'wait' | 'idle' | 'parked' | 'continued'; next?: string };

export function createSubscriptionSchedule(activities: SubscriptionScheduleActivities) {
  return restate.object({
    name: SUBSCRIPTION_SCHEDULE,
    options: RETENTION,
    handlers: {
      wake: releasing('SubscriptionSchedule', activities, async (ctx: restate.ObjectContext): Promise<SubscriptionScheduleResult> => {
        const { organizationId, subscriptionId } = parseSubscriptionKey(ctx.key);
        for (let i = 0; i < PERIODS_PER_WAKE; i++) {
          const ran = await step(ctx, `run-${i}`, () => activities.runSubscriptionPeriod(organizationId, subscriptionId), 'database');
          if (!ran.ok) {
            await ctx.run('park', () => activities.parkWork(WORK.subscriptionSchedule(organizationId, subscriptionId), ran.failed), RETRY.database);
            return { periods: i, ended: 'parked' };
          }
          const r = ran.value;
          if (r.kind === 'wait') return { periods: i, ended: 'wait', next: r.date };
          if (r.kind === 'idle') return { periods: i, ended: 'idle' };
          // The period is taken; its issue is finished before the next period runs. Should that fail for good, the
          // reservation keeps its own wake-index row (the InvoiceIssue object finishes or parks it): the next period
          // goes on regardless.
          const issued = await step(ctx, `issue-${i}`, () => activities.finishInvoiceIssue(r.invoiceId), 'finishIssue');
          // Its mail, and its dunning when a start date the clock has long passed made it past due already, are due
          // now: the scheduler hands them on.
          if (issued.ok && (issued.value.mail || issued.value.dunning)) handOn(ctx, organizationId);
        }
        // The rest in a fresh invocation: the row is still due, so the release hands it on.
        return { periods: PERIODS_PER_WAKE, ended: 'continued' };
      }),
    },
  });
}

export type SubscriptionSchedule = ReturnType<typeof createSubscriptionSchedule>;
