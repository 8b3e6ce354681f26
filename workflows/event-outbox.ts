import * as restate from '@restatedev/restate-sdk';
import { WORKFLOW_SERVICES } from '../contracts/workflows.ts';
import { RETENTION, RETRY } from './shared/durable.ts';
import { releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * The retry of the event relay after a hand-off to the engine failed (key: the organisation whose event it was;
 * services/events/event-relay.ts). The relay lists this object's wake-index row a few seconds on; the shard's
 * scheduler sends it as soon as the engine takes calls again, and its one step clears the row and drains the outbox
 * through the workflows process's relay (a drain that fails again lists the row again). Crash story: the clear and
 * the drain are one step; repeating it hands on only what is still in the outbox, and the engine deduplicates each
 * event on its id.
 */
export const EVENT_OUTBOX = WORKFLOW_SERVICES.EventOutbox;

export interface EventOutboxActivities extends WakeClaimActivities {
  /** Clears the organisation's retry row, then hands on whatever the event outbox holds (the relay's own drain). */
  retryEventOutbox(organizationId: string): Promise<void>;
}

export function createEventOutbox(activities: EventOutboxActivities) {
  return restate.object({
    name: EVENT_OUTBOX,
    options: RETENTION,
    handlers: {
      drain: releasing('EventOutbox', activities, async (ctx: restate.ObjectContext): Promise<{ drained: true }> => {
        await ctx.run('drain', () => activities.retryEventOutbox(ctx.key), RETRY.job);
        return { drained: true };
      }),
    },
  });
}

export type EventOutbox = ReturnType<typeof createEventOutbox>;
