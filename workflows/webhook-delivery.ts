import * as restate from '@restatedev/restate-sdk';

/**
 * One webhook delivery, as a virtual object keyed by the delivery id (one per event and endpoint, or per ping).
 * PostgreSQL holds the delivery's state and schedule; this object only sequences: attempt when due, record, and arm
 * one timer for the next attempt. Restate's own retries are not the schedule: an attempt that gets no 2xx is a
 * recorded result, not an error, and the wait before the next one (5 s … 10 h) is taken in the organisation's
 * business time, read inside the steps.
 *
 * `wake` is both the armed timer and a poke. A timer carries the token it was armed with; a timer whose token is
 * no longer current is stale and does nothing. A poke (no token: a new delivery, a replay, a test clock advance, the
 * overdue sweep) cancels the armed timer, re-reads the delivery, and attempts if it is due or re-arms if it is
 * not, so at most one timer is ever armed. Exclusive handlers of one key never overlap.
 */
export const WEBHOOK_DELIVERY = 'WebhookDelivery';

/** The journaled result of a delivery step. */
export type DeliveryNext = { next: 'done'; status: string } | { next: 'wait'; dueInMs: number; status: string };

export interface WebhookDeliveryActivities {
  /** Attempts the delivery if it is due (POST and record), or says how long to wait, or that it is finished. */
  deliverWebhook(deliveryId: string): Promise<DeliveryNext>;
}

export interface WakeRequest {
  token?: number;
}

interface DeliveryState {
  token: number;
  /** Invocation id of the armed timer, if any. */
  pendingWake: string | null;
}

export type WakeResult = { ignored: 'stale' } | { status: string; nextInMs?: number } | { error: string };

type DeliveryContext = restate.ObjectContext<{ s: DeliveryState }>;
type SelfTarget = { wake: (ctx: restate.ObjectContext, req: WakeRequest) => Promise<WakeResult> };

/** The steps touch only PostgreSQL and the receiver; a database outage longer than this leaves the wake index row. */
const STEP_RETRY = { maxRetryAttempts: 8, maxRetryInterval: { seconds: 10 } } as const;

export function createWebhookDelivery(activities: WebhookDeliveryActivities) {
  return restate.object({
    name: WEBHOOK_DELIVERY,
    handlers: {
      wake: async (ctx: DeliveryContext, req: WakeRequest | null): Promise<WakeResult> => {
        const stored = await ctx.get('s');
        const s = stored ?? { token: 0, pendingWake: null };
        const token = req?.token;
        if (token !== undefined && token !== s.token) return { ignored: 'stale' };
        if (s.pendingWake !== null && s.pendingWake !== ctx.request().id) {
          ctx.invocation(restate.InvocationIdParser.fromString(s.pendingWake)).cancel();
        }
        s.pendingWake = null;
        let next: DeliveryNext;
        try {
          next = await ctx.run('deliver', () => activities.deliverWebhook(ctx.key), STEP_RETRY);
        } catch (err) {
          if (!(err instanceof restate.TerminalError)) throw err;
          // The database stayed unreachable: arm nothing. The delivery's wake index row stays, and the overdue
          // sweep pokes it again once the database is back.
          if (stored) ctx.set('s', s);
          return { error: err.message };
        }
        if (next.next === 'done') {
          // Finished, gone or parked: no state is kept for it (a replay or reactivation starts afresh).
          if (stored) ctx.clearAll();
          return { status: next.status };
        }
        s.token += 1;
        const handle = ctx
          .objectSendClient<SelfTarget>({ name: WEBHOOK_DELIVERY }, ctx.key)
          .wake({ token: s.token }, restate.rpc.sendOpts({ delay: Math.max(0, Math.ceil(next.dueInMs)) }));
        s.pendingWake = await handle.invocationId;
        ctx.set('s', s);
        return { status: next.status, nextInMs: next.dueInMs };
      },
    },
  });
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
