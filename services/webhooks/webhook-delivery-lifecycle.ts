import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of a webhook delivery (webhook_deliveries.status, 006_events_webhooks.sql):
 *
 *   (fan-out, ping) → queued → delivered | failed (a next attempt is due) | given-up (after the last attempt);
 *   failed → delivered | failed | given-up with each further attempt; failed | given-up → queued (a replay, a new round).
 *
 * The attempts of many deliveries are recorded in one statement (delivery-store.ts `recordAttempts`, a hot path): it
 * takes its from-states and targets from here (`ATTEMPTABLE_DELIVERY_STATUSES`, `afterAttempt`) rather than the kit's
 * one-row UPDATE. `next_attempt_at` is set exactly in the attemptable states (the CHECK in the migration).
 */
export const WEBHOOK_DELIVERY_STATUSES = ['queued', 'delivered', 'failed', 'given-up'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** A new delivery's status (its INSERT). */
export const INITIAL_DELIVERY_STATUS = 'queued' as const satisfies WebhookDeliveryStatus;

/** The states an attempt may start from: a next attempt is due. */
export const ATTEMPTABLE_DELIVERY_STATUSES = ['queued', 'failed'] as const satisfies readonly WebhookDeliveryStatus[];

/** The states a replay starts a new round from. */
export const REPLAYABLE_DELIVERY_STATUSES = ['failed', 'given-up'] as const satisfies readonly WebhookDeliveryStatus[];

export const WEBHOOK_DELIVERY_TRANSITIONS = {
  /** The endpoint answered 2xx. */
  succeed: { from: ATTEMPTABLE_DELIVERY_STATUSES, to: 'delivered' },
  /** It did not, and the retry schedule has a next attempt. */
  fail: { from: ATTEMPTABLE_DELIVERY_STATUSES, to: 'failed' },
  /** It did not, and that was the last attempt. */
  giveUp: { from: ATTEMPTABLE_DELIVERY_STATUSES, to: 'given-up' },
  /** POST …/replay: a new round with a fresh retry schedule. */
  replay: { from: REPLAYABLE_DELIVERY_STATUSES, to: 'queued' },
} as const;

export const WEBHOOK_DELIVERY_LIFECYCLE = defineLifecycle({
  name: 'webhook delivery',
  table: 'webhook_deliveries',
  column: 'status',
  stateNoun: 'status',
  states: WEBHOOK_DELIVERY_STATUSES,
  transitions: WEBHOOK_DELIVERY_TRANSITIONS,
});

/** Where an attempt leaves its delivery: delivered, failed with a next attempt, or given up. */
export const afterAttempt = (succeeded: boolean, retries: boolean): WebhookDeliveryStatus =>
  WEBHOOK_DELIVERY_TRANSITIONS[succeeded ? 'succeed' : retries ? 'fail' : 'giveUp'].to;

/** Whether a delivery in `status` has an attempt due. */
export const isAttemptable = (status: WebhookDeliveryStatus): boolean => (ATTEMPTABLE_DELIVERY_STATUSES as readonly string[]).includes(status);

/** What an attempt made of its delivery, as the metrics count it (`faktura_webhook_deliveries_total{outcome}`); none while queued. */
export type DeliveryOutcome = 'delivered' | 'failed' | 'given_up';
const OUTCOMES = { queued: null, delivered: 'delivered', failed: 'failed', 'given-up': 'given_up' } as const satisfies Record<WebhookDeliveryStatus, DeliveryOutcome | null>;
export const deliveryOutcome = (status: WebhookDeliveryStatus): DeliveryOutcome | null => OUTCOMES[status];
