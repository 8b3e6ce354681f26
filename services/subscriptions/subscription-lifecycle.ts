import type { SubscriptionEventData } from '../../contracts/event-catalogue.ts';
import type { EventType } from '../../contracts/events.ts';
import { recordEvent } from '../events/record-event.ts';
import { DomainError } from '../shared/errors.ts';
import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The subscription lifecycle as data (docs/api-conventions.md, "Subscriptions", Transitions):
 *
 *   (create) → active; active → paused (pause); paused → active (resume); active | paused → cancelled (cancel, or the
 *   end: the last period was invoiced, or endDate passed). `cancelled` is final.
 *
 * Besides the transitions, which statuses allow a change (PATCH: active or paused) and a run (active only). A call
 * from any other status is 422 `invalid_transition` naming the current status, never a silent no-op. The status
 * list is also the CHECK on subscriptions.status (018_subscriptions.sql), which test/unit/lifecycles.test.ts checks.
 * Every change of the status goes through the kit's guarded UPDATE (`SUBSCRIPTION_LIFECYCLE`), which writes the
 * transition's `subscription.*` event from the row as it is after the change, in the same transaction.
 */

export const SUBSCRIPTION_STATUSES = ['active', 'paused', 'cancelled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const INITIAL_SUBSCRIPTION_STATUS = 'active' as const satisfies SubscriptionStatus;

/** The status no transition leaves. */
export const FINAL_SUBSCRIPTION_STATUS = 'cancelled' as const satisfies SubscriptionStatus;

/** The status of a subscription whose periods are not invoiced for now (a run waits; the end still comes). */
export const PAUSED_SUBSCRIPTION_STATUS = 'paused' as const satisfies SubscriptionStatus;

type SubscriptionEventType = Extract<EventType, `subscription.${string}`>;

interface SubscriptionTransition {
  from: readonly SubscriptionStatus[];
  to: SubscriptionStatus;
  event: SubscriptionEventType;
}

export const SUBSCRIPTION_TRANSITIONS = {
  /** POST …/pause: no period is invoiced while paused. */
  pause: { from: ['active'], to: 'paused', event: 'subscription.paused' },
  /** POST …/resume: periods that started while paused are skipped. */
  resume: { from: ['paused'], to: 'active', event: 'subscription.resumed' },
  /** POST …/cancel: final. */
  cancel: { from: ['active', 'paused'], to: 'cancelled', event: 'subscription.cancelled' },
  /** No further period can come (the last one is invoiced, or endDate passed): cancelled with endedAt, once. */
  end: { from: ['active', 'paused'], to: 'cancelled', event: 'subscription.ended' },
} as const satisfies Record<string, SubscriptionTransition>;

export type SubscriptionTransitionName = keyof typeof SUBSCRIPTION_TRANSITIONS;

/** The facts of a subscription row its events carry. */
export interface SubscriptionEventFacts {
  customer_id: string;
  status: SubscriptionStatus;
  next_invoice_date: string | null;
  external_reference: string | null;
}

/** The event payload: the subscription as of after the change, no personal data. */
export const subscriptionEventData = (r: SubscriptionEventFacts): SubscriptionEventData => ({
  customerId: r.customer_id,
  status: r.status,
  nextInvoiceDate: r.next_invoice_date,
  externalReference: r.external_reference,
});

/**
 * The lifecycle in the kit's terms (services/shared/lifecycle.ts): the guarded UPDATE, the state lists, and the
 * transition's event written after the UPDATE from the columns it returns.
 */
export const SUBSCRIPTION_LIFECYCLE = defineLifecycle({
  name: 'subscription',
  table: 'subscriptions',
  column: 'status',
  stateNoun: 'status',
  states: SUBSCRIPTION_STATUSES,
  transitions: SUBSCRIPTION_TRANSITIONS,
  returning: 'customer_id, next_invoice_date, external_reference',
  async onTransition(sql, moved): Promise<void> {
    const facts = { ...(moved.row as Omit<SubscriptionEventFacts, 'status'>), status: moved.to };
    const type = SUBSCRIPTION_TRANSITIONS[moved.transition].event;
    await recordEvent(sql, { organizationId: moved.organizationId!, type, entityId: String(moved.id), data: subscriptionEventData(facts) });
  },
});

/** What else a status allows: a PATCH (`update`) and a period's run (`run`). */
export const SUBSCRIPTION_ACTIONS = {
  update: ['active', 'paused'],
  run: ['active'],
} as const satisfies Record<string, readonly SubscriptionStatus[]>;

export type SubscriptionAction = SubscriptionTransitionName | keyof typeof SUBSCRIPTION_ACTIONS;

const allowedFrom = (action: SubscriptionAction): readonly SubscriptionStatus[] =>
  action in SUBSCRIPTION_TRANSITIONS
    ? SUBSCRIPTION_TRANSITIONS[action as SubscriptionTransitionName].from
    : SUBSCRIPTION_ACTIONS[action as keyof typeof SUBSCRIPTION_ACTIONS];

/** Whether `action` may start from `status`. */
export const canSubscription = (status: SubscriptionStatus, action: SubscriptionAction): boolean => allowedFrom(action).includes(status);

const VERB: Record<SubscriptionAction, string> = {
  pause: 'paused',
  resume: 'resumed',
  cancel: 'cancelled',
  end: 'ended',
  update: 'changed',
  run: 'invoiced',
};

/** The 422 `invalid_transition` for `action` from `status`: the message names the current status and what is allowed. */
export function transitionRefused(status: SubscriptionStatus, action: SubscriptionAction): DomainError {
  const from = allowedFrom(action);
  const final = status === FINAL_SUBSCRIPTION_STATUS ? ` (${FINAL_SUBSCRIPTION_STATUS} is final)` : '';
  return new DomainError(
    'invalid_transition',
    `The subscription is ${status}${final}: it cannot be ${VERB[action]}, which needs status ${from.join(' or ')}.`,
  );
}

/** Throws `transitionRefused` unless `action` may start from `status`. */
export function assertCan(status: SubscriptionStatus, action: SubscriptionAction): void {
  if (!canSubscription(status, action)) throw transitionRefused(status, action);
}
