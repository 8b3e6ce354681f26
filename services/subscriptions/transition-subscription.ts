import type { Subscription } from '../../contracts/subscriptions.ts';
import type { Queryable } from '../shared/db.ts';
import { lastPeriod, nextPeriodOnOrAfter } from './period-math.ts';
import { scheduleSubscription } from './schedule-subscription.ts';
import { assertCan, SUBSCRIPTION_LIFECYCLE, SUBSCRIPTION_TRANSITIONS, transitionRefused } from './subscription-lifecycle.ts';
import {
  endIfExhausted,
  getSubscriptionRowOrThrow,
  nextInvoiceDateOf,
  scheduleOfRow,
  toSubscription,
} from './subscription-queries.ts';

type ApiTransition = 'pause' | 'resume' | 'cancel';

/**
 * POST …/pause, …/resume, …/cancel: a guarded status change of the locked subscription and its event, in the
 * caller's transaction; from any status the lifecycle does not allow, 422 invalid_transition naming the status.
 *
 * - pause: `pausedAt` set, `nextInvoiceDate` null; the next period is kept.
 * - resume: the next period becomes the first one starting on or after `today` (the business date): the periods
 *   that started while paused (and any not invoiced before the pause) are skipped, never billed. When no period is
 *   left to come, the subscription ends right after (`subscription.resumed`, then `subscription.ended`).
 * - cancel: `cancelledAt` set, final; `nextInvoiceDate` null.
 */
export async function transitionSubscription(
  sql: Queryable,
  organizationId: string,
  id: string,
  transition: ApiTransition,
  today: string,
): Promise<Subscription> {
  const row = await getSubscriptionRowOrThrow(sql, organizationId, id, { lock: true });
  assertCan(row.status, transition);
  const t = SUBSCRIPTION_TRANSITIONS[transition];
  const schedule = scheduleOfRow(row);
  let nextPeriod = row.next_period;
  if (transition === 'resume') {
    const k = nextPeriodOnOrAfter(schedule, today, row.next_period);
    // No period left to come: the next one is the first after the last, and the end follows.
    const last = lastPeriod(schedule);
    nextPeriod = k ?? (last === null ? row.next_period : Math.max(row.next_period, last + 1));
  }
  const nextInvoiceDate = nextInvoiceDateOf(schedule, nextPeriod, t.to);
  await SUBSCRIPTION_LIFECYCLE.transition(sql, row.id, transition, {
    organizationId,
    set: sql`
      next_period = ${nextPeriod},
      next_invoice_date = ${nextInvoiceDate},
      paused_at = ${transition === 'pause' ? sql`now()` : sql`NULL`},
      cancelled_at = ${transition === 'cancel' ? sql`now()` : sql`cancelled_at`}`,
    refused: () => transitionRefused(row.status, transition),
  });
  let after = await getSubscriptionRowOrThrow(sql, organizationId, id);
  if (transition === 'resume' && (await endIfExhausted(sql, organizationId, after, today))) {
    after = await getSubscriptionRowOrThrow(sql, organizationId, id);
  }
  // The schedule follows the status: resume re-arms it, pause keeps only the end, cancel clears it.
  await scheduleSubscription(sql, organizationId, after);
  return toSubscription(after, today);
}

