import type { Clock } from '../../services/shared/clock.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import type { Db } from '../../services/shared/db.ts';
import { dueWakes, fanOutEvent, planAttempt, recordAttempt, type AttemptResult, type WakeRef } from '../../services/webhooks/delivery-store.ts';
import { signatureHeader } from '../../services/webhooks/signing.ts';
import type { Resolver, UrlPolicy } from '../../services/webhooks/url-policy.ts';
import { postWebhook, type WebhookAgents } from './post-webhook.ts';

export interface WebhookActivityDeps {
  db: Db;
  keyring: Keyring;
  /** Business time: retries wait in the organisation's time (a test clock advance brings them forward). */
  clock: Clock;
  policy: UrlPolicy;
  resolve?: Resolver;
  timeoutMs?: number;
  agents?: WebhookAgents;
}

/** What a woken delivery does next; journaled by the workflow, so it holds no secret and no body. */
export type DeliveryStep =
  | { next: 'done'; status: 'delivered' | 'given-up' | 'gone' | 'parked' }
  | { next: 'wait'; dueInMs: number; status: 'failed' | 'waiting' };

/** A failed recording is retried here, within the step, so a database hiccup does not send the webhook twice. */
const RECORD_RETRIES_MS = [100, 500, 2000, 5000];

/**
 * One step of one delivery: if it is due by business time, sign the body with the endpoint's live secrets, POST it,
 * and record the attempt; otherwise say how long to wait. `webhook-id` is the event id (identical across attempts
 * and replays); `webhook-timestamp` is real time, also under a test clock (decisions.md), because receivers check
 * it against their own clock. The attempt holds the delivery's claim, so two attempts of one delivery never overlap.
 *
 * POST and record are one journaled step: a crash between them (or a database that stays down through every
 * recording retry) repeats the POST with the same webhook-id, which receivers deduplicate on; it never loses one.
 */
export async function deliverWebhook(deps: WebhookActivityDeps, deliveryId: string, claimant = `delivery:${deliveryId}`): Promise<DeliveryStep> {
  const plan = await planAttempt(deps.db, deps.clock, deps.keyring, deliveryId, claimant);
  if (plan.kind === 'gone' || plan.kind === 'parked') return { next: 'done', status: plan.kind };
  if (plan.kind === 'wait') return { next: 'wait', dueInMs: plan.dueInMs, status: 'waiting' };
  const p = plan.plan;
  const attemptedAt = Date.now();
  const timestamp = Math.floor(attemptedAt / 1000);
  const headers = {
    'webhook-id': p.messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(p.secrets, p.messageId, timestamp, p.body),
  };
  const out = await postWebhook(p.url, headers, p.body, {
    policy: deps.policy,
    ...(deps.resolve ? { resolve: deps.resolve } : {}),
    ...(deps.timeoutMs ? { timeoutMs: deps.timeoutMs } : {}),
    ...(deps.agents ? { agents: deps.agents } : {}),
  });
  const result: AttemptResult = { organizationId: p.organizationId, round: p.round, number: p.number, attemptedAt, ...out };
  for (let i = 0; ; i++) {
    try {
      return await recordAttempt(deps.db, deps.clock, deliveryId, result);
    } catch (err) {
      if (i >= RECORD_RETRIES_MS.length) throw err;
      await new Promise((r) => setTimeout(r, RECORD_RETRIES_MS[i]));
    }
  }
}

/**
 * The fan-out of one committed event, with the first attempt of each of its deliveries made right here, in
 * parallel: most deliveries succeed at once and never need a workflow of their own. Returns the deliveries that
 * did not finish (a failed first attempt, a claim held elsewhere), which their own workflow takes over.
 */
export async function fanOutAndDeliver(deps: WebhookActivityDeps, eventId: string, organizationId: string): Promise<string[]> {
  const claimant = `event:${eventId}`;
  const ids = await fanOutEvent(deps.db, deps.clock, eventId, organizationId, claimant);
  const steps = await Promise.all(ids.map((id) => deliverWebhook(deps, id, claimant).then((step) => ({ id, step }))));
  return steps.filter((s) => s.step.next === 'wait').map((s) => s.id);
}

export const dueWakeUps = (deps: WebhookActivityDeps, organizationId: string, after: WakeRef | null, limit: number): Promise<WakeRef[]> =>
  dueWakes(deps.db, deps.clock, organizationId, after, limit);
