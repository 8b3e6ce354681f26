import * as restate from '@restatedev/restate-sdk';
import { WORKFLOW_SERVICES } from '../contracts/workflows.ts';
import { arm, disarm, isStaleWake, step, type ArmedTimer } from './shared/durable.ts';

/**
 * One webhook delivery, as a virtual object keyed by the delivery id (one per event and endpoint, or per ping).
 * PostgreSQL holds the delivery's state and schedule; this object only sequences: attempt when due, record, and arm
 * one timer for the next attempt. Restate's own retries are not the schedule: an attempt that gets no 2xx is a
 * recorded result, not an error, and the wait before the next one (5 s … 10 h) is taken in the organisation's
 * business time, read inside the steps.
 *
 * `wake` is both the armed timer and a poke. A timer carries the token it was armed with; a timer whose token is
 * no longer current is stale and does nothing. A poke (no token: a new delivery, a replay, a test clock advance, the
 * housekeeping loop) cancels the armed timer, re-reads the delivery, and attempts if it is due or re-arms if it is
 * not, so at most one timer is ever armed. Exclusive handlers of one key never overlap.
 */
export const WEBHOOK_DELIVERY = WORKFLOW_SERVICES.WebhookDelivery;

/** The journaled result of a delivery step. */
export type DeliveryNext = { next: 'done'; status: string } | { next: 'wait'; dueInMs: number; status: string };

export interface WebhookDeliveryActivities {
  /** Attempts the delivery if it is due (POST and record), or says how long to wait, or that it is finished. */
  deliverWebhook(deliveryId: string): Promise<DeliveryNext>;
}

export interface WakeRequest {
  token?: number;
}

interface DeliveryState extends ArmedTimer {
  token: number;
}

export type WakeResult = { ignored: 'stale' } | { status: string; nextInMs?: number } | { error: string };

type DeliveryContext = restate.ObjectContext<{ s: DeliveryState }>;

export function createWebhookDelivery(activities: WebhookDeliveryActivities) {
  return restate.object({
    name: WEBHOOK_DELIVERY,
    handlers: {
      wake: async (ctx: DeliveryContext, req: WakeRequest | null): Promise<WakeResult> => {
        const stored = await ctx.get('s');
        const s = stored ?? { token: 0, pendingWake: null };
        if (isStaleWake(s.token, req?.token)) return { ignored: 'stale' };
        disarm(ctx, s);
        // The steps touch only PostgreSQL and the receiver; a database outage longer than the `database` policy
        // leaves the wake index row, and the housekeeping loop pokes it again once the database is back.
        const delivered = await step(ctx, 'deliver', () => activities.deliverWebhook(ctx.key), 'database');
        if (!delivered.ok) {
          if (stored) ctx.set('s', s);
          return { error: delivered.failed };
        }
        const next = delivered.value;
        if (next.next === 'done') {
          // Finished, gone or parked: no state is kept for it (a replay or reactivation starts afresh).
          if (stored) ctx.clearAll();
          return { status: next.status };
        }
        s.token += 1;
        await arm(ctx, s, { service: 'WebhookDelivery', handler: 'wake', input: { token: s.token } }, next.dueInMs);
        ctx.set('s', s);
        return { status: next.status, nextInMs: next.dueInMs };
      },
    },
  });
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
