import * as restate from '@restatedev/restate-sdk';
import { RETENTION } from './shared/durable.ts';
import { WORK, WORKFLOW_SERVICES, parseDunningKey, type WorkTarget } from '../contracts/workflows.ts';
import { REMINDER_DELIVERY } from '../services/dispatch/delivery-lifecycle.ts';
import type { DunningStep } from '../services/reminders/take-due-dunning-step.ts';
import { dispatchDocument } from './shared/dispatch.ts';
import { runStepLoop, type LoopResult } from './shared/step-loop.ts';
import { handOn, releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * The dunning lifecycle of one issued invoice, as a virtual object keyed by `<organisation>:<invoice>`: its
 * exclusive handler is the invoice's lease, so two wakes never take a step at once. It holds no timer and no state:
 * the invoice's wake-index row is its schedule (moved by each step), and PostgreSQL holds what was taken. The
 * decisions are the pure rules of services/reminders/reminder-policy.ts, applied inside `take-step`; this loop only
 * runs the steps, so its journal (the Restate UI) shows each decision and each delivery of the invoice.
 *
 * One wake takes every step whose day has come, in order, each on its own date (a clock advance of 40 days takes 40
 * days of steps), and renders and delivers each reminder before the next is taken. A crash anywhere repeats only
 * what was not journaled: a reminder committed but not delivered is found again by `take-step` and delivered, never
 * taken twice; its mail keeps its Message-ID.
 */
export const DUNNING = WORKFLOW_SERVICES.Dunning;

export type ReminderDeliveryOutcome = { kind: string } & Record<string, unknown>;

export interface DunningActivities extends WakeClaimActivities {
  takeDunningStep(organizationId: string, invoiceId: string): Promise<DunningStep>;
  renderReminder(reminderId: string): Promise<{ status: string }>;
  deliverReminder(reminderId: string): Promise<ReminderDeliveryOutcome>;
  recordDelivery(kind: 'reminder', reminderId: string, attempt: ReminderDeliveryOutcome): Promise<{ delivery: string }>;
  giveUpDelivery(kind: 'reminder', reminderId: string, reason: string): Promise<{ delivery: string }>;
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

/** Steps one wake takes at most before it hands the rest to a fresh invocation (a short journal per invocation). */
const STEPS_PER_WAKE = 16;

export type DunningResult = LoopResult;

export function createDunning(activities: DunningActivities) {
  return restate.object({
    name: DUNNING,
    options: RETENTION,
    handlers: {
      wake: releasing('Dunning', activities, async (ctx: restate.ObjectContext): Promise<DunningResult> => {
        const { organizationId, invoiceId } = parseDunningKey(ctx.key);
        return runStepLoop(ctx, activities, {
          service: 'Dunning',
          work: WORK.dunning(organizationId, invoiceId),
          maxSteps: STEPS_PER_WAKE,
          take: () => activities.takeDunningStep(organizationId, invoiceId),
          run: async (s, i) => {
            // A limitation warning noted, a payment plan broken: nothing to deliver, the next step follows.
            if (s.kind === 'done' || s.kind === 'wait' || s.kind === 'noted' || s.kind === 'plan_broken') return null;
            // Collected (autoCollections): the case's lifecycle begins now; this one has ended.
            if (s.kind === 'collected') {
              handOn(ctx, organizationId);
              return null;
            }
            // A step of another invoice of the customer, taken first as it comes first in the customer's order (its
            // date, then the oldest due date, then the lowest number: step-order.ts): that invoice delivers it.
            if (s.kind === 'sibling') {
              handOn(ctx, organizationId);
              return null;
            }
            const delivered = await dispatchDocument(ctx, {
              name: (verb) => `${verb}-${i}`,
              ...(s.documented ? {} : { render: () => activities.renderReminder(s.reminderId) }),
              ...(s.delivery === REMINDER_DELIVERY.state.pending ? { deliver: () => activities.deliverReminder(s.reminderId) } : {}),
              record: (attempt) => activities.recordDelivery('reminder', s.reminderId, attempt),
              giveUp: (error) => activities.giveUpDelivery('reminder', s.reminderId, error),
            });
            return delivered.ok ? null : delivered.failed;
          },
        });
      }),
    },
  });
}

export type Dunning = ReturnType<typeof createDunning>;
