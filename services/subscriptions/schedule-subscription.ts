import { WORK } from '../../contracts/workflows.ts';
import { clearWake, scheduleWake } from '../clock/wake-index.ts';
import type { Queryable } from '../shared/db.ts';
import { addDays } from './period-math.ts';
import { canSubscription, PAUSED_SUBSCRIPTION_STATUS } from './subscription-lifecycle.ts';
import type { SubscriptionRow } from './subscription-queries.ts';

/**
 * The subscription's wake-index row (WORK.subscriptionSchedule), moved in the transaction that changes what it waits
 * for. It is the schedule: there is no timer. The SubscriptionSchedule object (workflows/subscription-schedule.ts) is
 * woken when it comes due and runs every due period.
 *
 * - active with a `nextInvoiceDate`: due at the start of that day in Europe/Copenhagen (at once when it has passed);
 * - paused with an `endDate`: due the day after `endDate`, when the subscription ends (the periods left started
 *   during the pause and are skipped);
 * - otherwise (paused without an end, cancelled, ended): no row.
 *
 * Written by create, PATCH, pause, resume, cancel, the end and each period's run.
 */
export async function scheduleSubscription(
  sql: Queryable,
  organizationId: string,
  r: Pick<SubscriptionRow, 'id' | 'status' | 'next_invoice_date' | 'end_date'>,
): Promise<void> {
  const target = WORK.subscriptionSchedule(organizationId, r.id);
  const date = canSubscription(r.status, 'run')
    ? r.next_invoice_date
    : r.status === PAUSED_SUBSCRIPTION_STATUS && r.end_date !== null ? addDays(r.end_date, 1) : null;
  if (date === null) {
    await clearWake(sql, target);
    return;
  }
  const [start] = await sql<{ at: Date }[]>`SELECT (${date}::date)::timestamp AT TIME ZONE 'Europe/Copenhagen' AS at`;
  await scheduleWake(sql, organizationId, target, start!.at);
}
