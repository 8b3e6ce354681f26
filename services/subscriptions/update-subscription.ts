import type { Subscription, SubscriptionPatch } from '../../contracts/subscriptions.ts';
import { assertCustomerExists } from '../customers/department-queries.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { rebase, scheduleOf, type PeriodSchedule } from './period-math.ts';
import { invalidEndDate } from './create-subscription.ts';
import { scheduleSubscription } from './schedule-subscription.ts';
import { assertCan } from './subscription-lifecycle.ts';
import {
  endIfExhausted,
  getSubscriptionRowOrThrow,
  linesWithAmounts,
  nextInvoiceDateOf,
  recordSubscriptionEvent,
  scheduleOfRow,
  storedLines,
  toSubscription,
} from './subscription-queries.ts';

const alreadyInvoiced = (field: 'customerId' | 'startDate') =>
  new DomainError('subscription_already_invoiced', `The ${field} of a subscription cannot change once a period was invoiced.`, {
    details: [{ path: `/${field}`, message: 'cannot change once a period was invoiced' }],
  });

/**
 * PATCH /v1/subscriptions/{id}: partial (omitted fields kept, `null` clears, a value replaces; `metadata` and `lines`
 * as a whole), for future periods only: invoices already made keep what they had. Checks in order: a cancelled
 * subscription (422 invalid_transition); `customerId` or `startDate` changed after a period was invoiced (422
 * subscription_already_invoiced; the same value again is no change); the end date before the start date (422
 * invalid_end_date); the lines' VAT rules; the customer (404 customer_not_found).
 *
 * The schedule: a new `startDate` (only before the first invoice) restarts it from that date (period 0). A new
 * `interval` applies from the next period on: that period keeps its start (`nextInvoiceDate` stays) and later ones
 * follow the new interval counted from it. A new `endDate` that leaves no further period ends the subscription
 * (`subscription.updated`, then `subscription.ended`).
 */
export async function updateSubscription(
  sql: Queryable,
  organizationId: string,
  id: string,
  input: SubscriptionPatch,
  today: string,
): Promise<Subscription> {
  const row = await getSubscriptionRowOrThrow(sql, organizationId, id, { lock: true });
  assertCan(row.status, 'update');
  const customerChanges = input.customerId !== undefined && input.customerId !== row.customer_id;
  const startChanges = input.startDate !== undefined && input.startDate !== row.start_date;
  if (row.has_runs && customerChanges) throw alreadyInvoiced('customerId');
  if (row.has_runs && startChanges) throw alreadyInvoiced('startDate');
  const startDate = input.startDate ?? row.start_date;
  const endDate = input.endDate !== undefined ? input.endDate : row.end_date;
  if (endDate !== null && endDate < startDate) throw invalidEndDate();
  const lines = input.lines ? storedLines(input.lines) : row.lines;
  if (input.lines) linesWithAmounts(lines);
  if (customerChanges) await assertCustomerExists(sql, organizationId, input.customerId!);

  const interval = input.interval ?? { unit: row.interval_unit, count: row.interval_count };
  const intervalChanges = interval.unit !== row.interval_unit || interval.count !== row.interval_count;
  let schedule: PeriodSchedule = { ...scheduleOfRow(row), endDate };
  let nextPeriod = row.next_period;
  if (startChanges) {
    schedule = scheduleOf(startDate, interval, endDate);
    nextPeriod = 0;
  } else if (intervalChanges) {
    schedule = rebase(schedule, nextPeriod, interval);
  }
  await sql`
    UPDATE subscriptions SET ${sql({
      customer_id: input.customerId ?? row.customer_id,
      name: input.name ?? row.name,
      interval_unit: schedule.interval.unit,
      interval_count: schedule.interval.count,
      start_date: startDate,
      end_date: endDate,
      due_days: input.dueDays ?? row.due_days,
      auto_send: input.autoSend ?? row.auto_send,
      lines: sql.json(lines as never),
      external_reference: input.externalReference !== undefined ? input.externalReference : row.external_reference,
      metadata: input.metadata !== undefined ? input.metadata : row.metadata,
      buyer_reference: input.buyerReference !== undefined ? input.buyerReference : row.buyer_reference,
      order_reference: input.orderReference !== undefined ? input.orderReference : row.order_reference,
      anchor_date: schedule.anchorDate,
      anchor_period: schedule.anchorPeriod,
      next_period: nextPeriod,
      next_invoice_date: nextInvoiceDateOf(schedule, nextPeriod, row.status),
    } as Record<string, unknown>)}, updated_at = now()
    WHERE organization_id = ${organizationId} AND id = ${row.id}`;
  let after = await getSubscriptionRowOrThrow(sql, organizationId, id);
  await recordSubscriptionEvent(sql, organizationId, 'subscription.updated', after);
  if (await endIfExhausted(sql, organizationId, after, today)) after = await getSubscriptionRowOrThrow(sql, organizationId, id);
  await scheduleSubscription(sql, organizationId, after);
  return toSubscription(after, today);
}
