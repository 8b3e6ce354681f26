import * as restate from '@restatedev/restate-sdk';
import { WORKFLOW_SERVICES } from '../contracts/workflows.ts';
import { disarm, isStaleWake, RETENTION, step, type ArmedTimer } from './shared/durable.ts';
import { releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * One webhook delivery, as a virtual object keyed by the delivery id (one per event and endpoint, or per ping).
 * PostgreSQL holds the delivery's state and schedule; this object only attempts when it is sent its wake-index row's
 * claim. Restate's own retries are not the schedule: an attempt that gets no 2xx is a recorded result, not an error,
 * and the attempt's step moves the row to the next attempt's time (5 s … 10 h, in the organisation's business time),
 * where the shard's scheduler sends it again (workflows/wake-scheduler.ts). A poke that comes early re-reads the
 * delivery and does nothing.
 */
export const WEBHOOK_DELIVERY = WORKFLOW_SERVICES.WebhookDelivery;

/** The journaled result of a delivery step. */
export type DeliveryNext = { next: 'done'; status: string } | { next: 'wait'; dueInMs: number; status: string };

export interface WebhookDeliveryActivities extends WakeClaimActivities {
  /** Attempts the delivery if it is due (POST and record), or says how long to wait, or that it is finished. */
  deliverWebhook(deliveryId: string): Promise<DeliveryNext>;
}

export interface WakeRequest {
  /** The generation of a timer armed before the wake index scheduled retries. */
  token?: number;
  claim?: number;
}

interface DeliveryState extends ArmedTimer {
  token: number;
}

export type WakeResult = { ignored: 'stale' } | { status: string; nextInMs?: number } | { error: string };

type DeliveryContext = restate.ObjectContext<{ s: DeliveryState }>;

export function createWebhookDelivery(activities: WebhookDeliveryActivities) {
  return restate.object({
    name: WEBHOOK_DELIVERY,
    options: RETENTION,
    handlers: {
      wake: releasing('WebhookDelivery', activities, async (ctx: DeliveryContext, req?: WakeRequest | null): Promise<WakeResult> => {
        const stored = await ctx.get('s');
        if (stored && isStaleWake(stored.token, req?.token)) return { ignored: 'stale' };
        // A timer this object armed itself before the wake index scheduled its retries is cancelled: the row is the
        // schedule now, and the object keeps no state.
        if (stored) {
          disarm(ctx, stored);
          ctx.clearAll();
        }
        // The step touches only PostgreSQL and the receiver; a database outage longer than the `database` policy
        // leaves the wake-index row, and the housekeeping loop's backstop hands it on again once the database is back.
        const delivered = await step(ctx, 'deliver', () => activities.deliverWebhook(ctx.key), 'database');
        if (!delivered.ok) return { error: delivered.failed };
        const next = delivered.value;
        // Waiting: the attempt moved the row to the next attempt's time, and the release tells the shard's scheduler.
        return next.next === 'done' ? { status: next.status } : { status: next.status, nextInMs: next.dueInMs };
      }),
    },
  });
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
