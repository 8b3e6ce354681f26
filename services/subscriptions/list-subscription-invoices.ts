import type { Invoice } from '../../contracts/invoices.ts';
import type { SubscriptionInvoiceListQuery } from '../../contracts/subscriptions.ts';
import { invoiceSelect, toInvoice, type InvoiceRow } from '../invoices/invoice-queries.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { findSubscriptionRow, subscriptionNotFound } from './subscription-queries.ts';

/**
 * GET /v1/subscriptions/{id}/invoices: the invoices the subscription made, newest period first (one invoice per
 * period, so the period start is the keyset), read through the unique index (organization_id, subscription_id,
 * period_start). An invoice whose issue is being finished shows as a locked draft, as in every invoice read.
 */
export async function listSubscriptionInvoices(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  subscriptionId: string,
  q: SubscriptionInvoiceListQuery,
): Promise<{ items: Invoice[]; nextCursor: string | null }> {
  if (!(await findSubscriptionRow(sql, organizationId, subscriptionId))) throw subscriptionNotFound();
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'subscription-invoices', filters: [subscriptionId] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const rows = await sql<(InvoiceRow & { period_start: string })[]>`
    SELECT ${invoiceSelect(sql)} FROM invoices i
    WHERE i.organization_id = ${organizationId} AND i.subscription_id = ${subscriptionId}
      ${after ? sql`AND i.period_start < ${after}` : sql``}
    ORDER BY i.period_start DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.period_start]));
  return { items: items.map((r) => toInvoice(r)), nextCursor };
}
