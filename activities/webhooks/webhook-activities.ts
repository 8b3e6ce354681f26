import type { Clock } from '../../services/shared/clock.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import type { Db } from '../../services/shared/db.ts';
import {
  fanOutEvent,
  planAttempts,
  recordAttempts,
  type AfterAttempt,
  type AttemptPlan,
  type AttemptResult,
  type Plan,
} from '../../services/webhooks/delivery-store.ts';
import { signatureHeader } from '../../services/webhooks/signing.ts';
import { deliveryOutcome } from '../../services/webhooks/webhook-delivery-lifecycle.ts';
import { recordWebhookAttempt } from '../../services/observability/metrics.ts';
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
  /**
   * Hands a delivery whose first attempt failed to its own WebhookDelivery object at once (a one-way call through
   * the engine), so its retry schedule starts while the event's other first attempts may still be out. Without it,
   * or should the call fail, the hand-off at the end of the fan-out step does the same, only later.
   */
  handOff?: (deliveryId: string) => Promise<void>;
}

/** What a woken delivery does next; journaled by the workflow, so it holds no secret and no body. */
export type DeliveryStep =
  | { next: 'done'; status: 'delivered' | 'given-up' | 'gone' | 'parked' }
  | { next: 'wait'; dueInMs: number; status: 'failed' | 'waiting' };

/** A failed recording is retried here, within the step, so a database hiccup does not send the webhook twice. */
const RECORD_RETRIES_MS = [100, 500, 2000, 5000];

/** Signs and POSTs one planned attempt; never throws for what the receiver does. */
async function attempt(deps: WebhookActivityDeps, p: AttemptPlan): Promise<AttemptResult> {
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
  return { organizationId: p.organizationId, round: p.round, number: p.number, attemptedAt, ...out };
}

/**
 * Records the attempts, retrying here so that a database hiccup does not send the webhooks again; each recorded
 * attempt counts in the metrics by what it made of its delivery, a delivered event also with its lag from the commit.
 */
async function record(
  deps: WebhookActivityDeps,
  results: { deliveryId: string; result: AttemptResult; eventAt: Date | null }[],
): Promise<Map<string, AfterAttempt>> {
  if (results.length === 0) return new Map();
  for (let i = 0; ; i++) {
    try {
      const after = await recordAttempts(deps.db, deps.clock, results);
      for (const { deliveryId, result, eventAt } of results) {
        const recorded = after.get(deliveryId)?.status;
        const outcome = recorded === undefined ? null : deliveryOutcome(recorded);
        if (outcome === 'delivered') {
          recordWebhookAttempt(outcome, eventAt ? (result.attemptedAt + result.durationMs - eventAt.getTime()) / 1000 : undefined);
        } else if (outcome !== null) {
          recordWebhookAttempt(outcome);
        }
      }
      return after;
    } catch (err) {
      if (i >= RECORD_RETRIES_MS.length) throw err;
      await new Promise((r) => setTimeout(r, RECORD_RETRIES_MS[i]));
    }
  }
}

const stepOf = (plan: Plan, after: AfterAttempt | undefined): DeliveryStep => {
  if (plan.kind === 'gone' || plan.kind === 'parked') return { next: 'done', status: plan.kind };
  if (plan.kind === 'wait') return { next: 'wait', dueInMs: plan.dueInMs, status: 'waiting' };
  return after!;
};

/**
 * Steps of deliveries, together: each one that is due by business time is signed with its endpoint's live secrets,
 * POSTed (all in parallel) and recorded (all in one statement); the others say how long to wait or that they are
 * finished. `webhook-id` is the event id (identical across attempts and replays); `webhook-timestamp` is real time,
 * also under a test clock (docs/api-conventions.md, "Events, webhooks and the test clock", Signing), because receivers
 * check it against their own clock. An attempt holds its delivery's claim, so two attempts of one delivery never
 * overlap.
 *
 * POST and record are one journaled step: a crash between them (or a database that stays down through every
 * recording retry) repeats the POST with the same webhook-id, which receivers deduplicate on; it never loses one.
 */
export async function deliverWebhooks(deps: WebhookActivityDeps, deliveryIds: string[], claimant: string): Promise<Map<string, DeliveryStep>> {
  const plans = await planAttempts(deps.db, deps.clock, deps.keyring, deliveryIds, claimant);
  return (await attemptAll(deps, plans)).steps;
}

/**
 * Attempts that finish this close together are recorded in one statement; a slower one waits for nobody else. A
 * failed delivery's retry is due from its recording, so an endpoint that hangs until the timeout must not hold back
 * the recording, and the hand-off, of another endpoint of the same event that answered at once.
 */
const RECORD_BATCH_WINDOW_MS = 20;

/** The steps of the deliveries, and those of them already handed to their own object (`handOff`). */
interface Attempted {
  steps: Map<string, DeliveryStep>;
  handedOff: Set<string>;
}

async function attemptAll(deps: WebhookActivityDeps, plans: Map<string, Plan>, opts: { handOff?: boolean } = {}): Promise<Attempted> {
  const due = [...plans].filter((e): e is [string, Plan & { kind: 'attempt' }] => e[1].kind === 'attempt');
  const after = new Map<string, AfterAttempt>();
  const recordings: Promise<void>[] = [];
  const handOffs: Promise<string | undefined>[] = [];
  let batch: { deliveryId: string; result: AttemptResult; eventAt: Date | null }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let outstanding = due.length;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const results = batch;
    batch = [];
    const recorded = record(deps, results).then((steps) => {
      for (const [id, step] of steps) {
        after.set(id, step);
        if (opts.handOff && deps.handOff && step.next === 'wait') {
          const handOff = deps.handOff;
          // Never a reason for the recording (already committed) to count as failed; a failed hand-off is left to the
          // step's own, at its end.
          handOffs.push(Promise.resolve().then(() => handOff(id)).then(() => id, () => undefined));
        }
      }
    });
    // Observed at once (a failure must not go unhandled while other attempts are still out); thrown below.
    recorded.catch(() => {});
    recordings.push(recorded);
  };
  await Promise.all(
    due.map(async ([deliveryId, p]) => {
      const result = await attempt(deps, p.plan);
      batch.push({ deliveryId, result, eventAt: p.plan.eventAt });
      outstanding -= 1;
      if (outstanding === 0) flush();
      else timer ??= setTimeout(flush, RECORD_BATCH_WINDOW_MS);
    }),
  );
  await Promise.all(recordings);
  const handedOff = new Set((await Promise.all(handOffs)).filter((id): id is string => id !== undefined));
  return { steps: new Map([...plans].map(([id, plan]) => [id, stepOf(plan, after.get(id))])), handedOff };
}

/** One delivery's step, for its own workflow. */
export async function deliverWebhook(deps: WebhookActivityDeps, deliveryId: string): Promise<DeliveryStep> {
  return (await deliverWebhooks(deps, [deliveryId], `delivery:${deliveryId}`)).get(deliveryId)!;
}

/**
 * The fan-out of one committed event, with the first attempt of each of its deliveries made right here: most
 * deliveries succeed at once and never need a workflow of their own. Returns the deliveries that did not finish (a
 * failed first attempt, a claim held elsewhere) and not yet handed to their own workflow, which takes them over.
 */
export async function fanOutAndDeliver(deps: WebhookActivityDeps, eventId: string, organizationId: string): Promise<string[]> {
  const created = await fanOutEvent(deps.db, deps.clock, deps.keyring, eventId, organizationId, `event:${eventId}`);
  if (created.length === 0) return [];
  const { steps, handedOff } = await attemptAll(deps, new Map(created.map((c): [string, Plan] => [c.id, { kind: 'attempt', plan: c.plan }])), { handOff: true });
  // Those already handed to their own object are not handed again (a second poke would only re-arm its timer).
  return created.filter((c) => steps.get(c.id)!.next === 'wait' && !handedOff.has(c.id)).map((c) => c.id);
}
