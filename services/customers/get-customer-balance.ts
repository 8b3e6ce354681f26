import type { CustomerBalance } from '../../contracts/payments.ts';
import type { Clock } from '../shared/clock.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { customerBalanceRow, daysBetween, isPastDue } from './balance-queries.ts';

/**
 * GET /v1/customers/{id}/balance: computed now, with the organisation's today (docs/api-conventions.md, "Customer
 * balance").
 */
export async function getCustomerBalance(
  sql: Queryable,
  deps: { clock: Clock },
  organizationId: string,
  customerId: string,
): Promise<CustomerBalance> {
  if (!isUuid(customerId)) throw notFound('customer_not_found', 'customer');
  const today = await deps.clock.today(organizationId);
  const row = await customerBalanceRow(sql, organizationId, customerId, today);
  if (!row) throw notFound('customer_not_found', 'customer');
  const daysOverdue = row.oldest_due_date === null ? 0 : daysBetween(row.oldest_due_date, today);
  const overdue = { overdueOere: row.overdue_oere, overdueCount: row.overdue_count, daysOverdue };
  return {
    customerId: customerId.toLowerCase(),
    asOf: today,
    outstandingOere: row.outstanding_oere,
    overdueOere: row.overdue_oere,
    overdueCount: row.overdue_count,
    oldestDueDate: row.oldest_due_date,
    daysOverdue,
    collectionsOere: row.collections_oere,
    creditOere: row.credit_oere,
    pastDue: isPastDue(overdue, { amountOere: row.past_due_amount_oere, days: row.past_due_days }),
  };
}
