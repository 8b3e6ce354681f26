import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { notFound } from '../shared/errors.ts';
import { findInvoiceRow } from './invoice-queries.ts';

export interface TimelineItem {
  code: string;
  at: string;
  data: Record<string, unknown>;
}

/**
 * The invoice's timeline in the order things happened (items are {code, at, data}, the route's schema),
 * cursor-paginated like every list (docs/api-conventions.md, "Lists"): keyset on (at, id), with `at` carried at the
 * database's full precision. (The position goes in as text: a parameter typed timestamptz would pass through a
 * JavaScript Date and lose the microseconds.)
 */
export async function getTimeline(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  id: string,
  q: { limit?: number; cursor?: string } = {},
): Promise<{ items: TimelineItem[]; nextCursor: string | null }> {
  const row = await findInvoiceRow(sql, organizationId, id);
  if (!row) throw notFound('invoice_not_found', 'invoice');
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'invoice-timeline', filters: [row.id] };
  const after = q.cursor !== undefined ? decodeCursor(keyring, scope, q.cursor) : null;
  const rows = await sql<{ id: string; code: string; at: Date; at_key: string; data: Record<string, unknown> }[]>`
    SELECT id, code, at, at::text AS at_key, data FROM invoice_timeline
    WHERE organization_id = ${organizationId} AND invoice_id = ${row.id}
      ${after ? sql`AND (at, id) > (${String(after[0])}::text::timestamptz, ${String(after[1])}::uuid)` : sql``}
    ORDER BY at, id
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.at_key, last.id]));
  return { items: items.map((i) => ({ code: i.code, at: i.at.toISOString(), data: i.data })), nextCursor };
}
