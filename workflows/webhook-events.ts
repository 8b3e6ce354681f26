import * as restate from '@restatedev/restate-sdk';
import { WORKFLOW_SERVICES } from '../contracts/workflows.ts';
import { RETENTION, RETRY } from './shared/durable.ts';
import { handOn } from './shared/wake-claim.ts';

/**
 * Receives committed events from the relay (idempotency key: the event id), creates one delivery per endpoint that
 * wants the event and makes each one's first attempt in the same step. Deliveries that did not finish there (the
 * receiver failed, or someone else held the delivery) are handed to their own WebhookDelivery object, which owns the
 * retry schedule. The step is idempotent in PostgreSQL, so a repeated hand-off attempts nothing twice.
 */
export const WEBHOOK_EVENTS = WORKFLOW_SERVICES.WebhookEvents;

export interface WebhookEventsActivities {
  /** Creates the event's deliveries and attempts each once; returns the ids of those still pending. */
  fanOutAndDeliver(eventId: string, organizationId: string): Promise<string[]>;
}

export function createWebhookEvents(activities: WebhookEventsActivities) {
  return restate.service({
    name: WEBHOOK_EVENTS,
    options: RETENTION,
    handlers: {
      route: async (ctx: restate.Context, req: { eventId: string; organizationId: string }): Promise<{ pending: number }> => {
        if (!req || typeof req.eventId !== 'string' || typeof req.organizationId !== 'string') {
          throw new restate.TerminalError('eventId and organizationId are required', { errorCode: 400 });
        }
        const pending = await ctx.run('fan-out', () => activities.fanOutAndDeliver(req.eventId, req.organizationId), RETRY.database);
        // Each pending delivery's wake-index row is due now: the scheduler claims and sends them.
        if (pending.length > 0) handOn(ctx, req.organizationId);
        return { pending: pending.length };
      },
    },
  });
}

export type WebhookEvents = ReturnType<typeof createWebhookEvents>;
