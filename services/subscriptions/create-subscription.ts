import type { Subscription, SubscriptionCreate } from '../../contracts/subscriptions.ts';
import { assertCustomerExists } from '../customers/department-queries.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { scheduleOf } from './period-math.ts';
import { scheduleSubscription } from './schedule-subscription.ts';
import { INITIAL_SUBSCRIPTION_STATUS } from './subscription-lifecycle.ts';
import {
  getSubscriptionRowOrThrow,
  linesWithAmounts,
  nextInvoiceDateOf,
  recordSubscriptionEvent,
  storedLines,
  toSubscription,
} from './subscription-queries.ts';

/** 422 invalid_end_date at /endDate. */
export const invalidEndDate = () =>
  new DomainError('invalid_end_date', 'The end date cannot be before the start date.', {
    details: [{ path: '/endDate', message: 'must be on or after startDate' }],
  });

/**
 * POST /v1/subscriptions: an active subscription whose next period is period 0 (its start date, which may be today or
 * in the past: the schedule then invoices the due periods, never this request). Checks in order: endDate before
 * startDate (422 invalid_end_date), the lines' VAT rules (as invoice lines), the customer (404 customer_not_found).
 * `subscription.created` in the same transaction.
 */
export async function createSubscription(sql: Queryable, organizationId: string, input: SubscriptionCreate, today: string): Promise<Subscription> {
  const endDate = input.endDate ?? null;
  if (endDate !== null && endDate < input.startDate) throw invalidEndDate();
  const lines = storedLines(input.lines);
  linesWithAmounts(lines);
  await assertCustomerExists(sql, organizationId, input.customerId);
  const schedule = scheduleOf(input.startDate, input.interval, endDate);
  const id = uuidv7();
  await sql`
    INSERT INTO subscriptions ${sql({
      organization_id: organizationId,
      id,
      customer_id: input.customerId,
      name: input.name,
      interval_unit: input.interval.unit,
      interval_count: input.interval.count,
      start_date: input.startDate,
      end_date: endDate,
      due_days: input.dueDays ?? 30,
      auto_send: input.autoSend ?? true,
      lines: sql.json(lines as never),
      external_reference: input.externalReference ?? null,
      metadata: input.metadata ?? null,
      buyer_reference: input.buyerReference ?? null,
      order_reference: input.orderReference ?? null,
      status: INITIAL_SUBSCRIPTION_STATUS,
      anchor_date: schedule.anchorDate,
      anchor_period: schedule.anchorPeriod,
      next_period: 0,
      next_invoice_date: nextInvoiceDateOf(schedule, 0, INITIAL_SUBSCRIPTION_STATUS),
      created_on: today,
    } as Record<string, unknown>)}`;
  const row = await getSubscriptionRowOrThrow(sql, organizationId, id, { lock: true });
  await recordSubscriptionEvent(sql, organizationId, 'subscription.created', row);
  // The schedule: due at the start of the first period (at once for a start today or earlier: the catch-up).
  await scheduleSubscription(sql, organizationId, row);
  return toSubscription(row, today);
}
