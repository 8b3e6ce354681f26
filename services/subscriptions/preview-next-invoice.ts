import type { SubscriptionInvoicePreview } from '../../contracts/subscriptions.ts';
import type { Queryable } from '../shared/db.ts';
import { period } from './period-math.ts';
import { canSubscription } from './subscription-lifecycle.ts';
import { getSubscriptionRowOrThrow, linesWithAmounts, scheduleOfRow } from './subscription-queries.ts';

/**
 * GET /v1/subscriptions/{id}/next_invoice: the invoice the next period will get, computed by the invoice arithmetic,
 * or null when none is coming (paused, cancelled, ended). `date` is its issue date: the period's start, or `today`
 * when that start has passed and the period waits for its run (a catch-up issues on the day it runs). Writes nothing.
 */
export async function previewNextInvoice(sql: Queryable, organizationId: string, id: string, today: string): Promise<SubscriptionInvoicePreview | null> {
  const row = await getSubscriptionRowOrThrow(sql, organizationId, id);
  if (!canSubscription(row.status, 'run') || row.next_invoice_date === null) return null;
  const p = period(scheduleOfRow(row), row.next_period);
  const amounts = linesWithAmounts(row.lines);
  return {
    date: p.start < today ? today : p.start,
    periodStart: p.start,
    periodEnd: p.end,
    lines: amounts.lines,
    netOere: amounts.netOere,
    vatOere: amounts.vatOere,
    grossOere: amounts.grossOere,
  };
}
