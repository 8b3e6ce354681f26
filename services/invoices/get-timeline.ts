import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { findInvoiceRow } from './invoice-queries.ts';

export interface TimelineItem {
  code: string;
  at: string;
  data: Record<string, unknown>;
}

/** The invoice's timeline in the order things happened (decisions.md: items are {code, at, data}). */
export async function getTimeline(sql: Queryable, organizationId: string, id: string): Promise<TimelineItem[]> {
  const row = await findInvoiceRow(sql, organizationId, id);
  if (!row) throw notFound('invoice_not_found', 'invoice');
  const items = await sql<{ code: string; at: Date; data: Record<string, unknown> }[]>`
    SELECT code, at, data FROM invoice_timeline
    WHERE organization_id = ${organizationId} AND invoice_id = ${id}
    ORDER BY at, id`;
  return items.map((i) => ({ code: i.code, at: i.at.toISOString(), data: i.data }));
}
