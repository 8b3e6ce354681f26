import type { Subscription, SubscriptionListQuery } from '../../contracts/subscriptions.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { nextInvoiceDateSql, subscriptionSelect, toSubscription, type SubscriptionRow } from './subscription-queries.ts';

/**
 * GET /v1/subscriptions: newest first, keyset on the time-ordered id within the organisation's own range of the
 * primary key (organization_id, id). Filters are exact; `nextInvoiceBefore` keeps those whose nextInvoiceDate is on
 * or before the date (so never a paused, cancelled or ended one, whose nextInvoiceDate is null).
 */
export async function listSubscriptions(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: SubscriptionListQuery,
  today: string,
): Promise<{ items: Subscription[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = {
    organizationId,
    list: 'subscriptions',
    filters: [q.status ?? null, q.customerId ?? null, q.externalReference ?? null, q.nextInvoiceBefore ?? null],
  };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const rows = await sql<SubscriptionRow[]>`
    SELECT ${subscriptionSelect(sql)} FROM subscriptions s
    WHERE s.organization_id = ${organizationId}
      ${q.status !== undefined ? sql`AND s.status = ${q.status}` : sql``}
      ${q.customerId !== undefined ? sql`AND s.customer_id = ${q.customerId}` : sql``}
      ${q.externalReference !== undefined ? sql`AND s.external_reference = ${q.externalReference}` : sql``}
      ${q.nextInvoiceBefore !== undefined ? sql`AND ${nextInvoiceDateSql(sql)} <= ${q.nextInvoiceBefore}` : sql``}
      ${after ? sql`AND s.id < ${after}` : sql``}
    ORDER BY s.id DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: items.map((r) => toSubscription(r, today)), nextCursor };
}
