import type { Invoice, InvoiceListQuery } from '../../contracts/invoices.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { invoiceSelect, toInvoice, type InvoiceRow } from './invoice-queries.ts';
import { INVOICE_STATUS, UNISSUED_STATUSES } from './invoice-lifecycle.ts';

/**
 * Newest first, keyset on the time-ordered id. `status=draft` includes invoices whose issue is being finished
 * (they read as drafts until their PDF exists).
 */
export async function listInvoices(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  type: 'invoice' | 'creditNote',
  q: InvoiceListQuery,
): Promise<{ items: Invoice[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = {
    organizationId,
    list: type === 'invoice' ? 'invoices' : 'creditnotes',
    filters: [q.status ?? null, q.customerId ?? null, q.externalReference ?? null],
  };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  // A draft being issued reads as a (locked) draft.
  const statuses = q.status === INVOICE_STATUS.draft ? [...UNISSUED_STATUSES] : q.status ? [q.status] : null;
  const rows = await sql<InvoiceRow[]>`
    SELECT ${invoiceSelect(sql)} FROM invoices i
    WHERE i.organization_id = ${organizationId} AND i.type = ${type}
      ${statuses ? sql`AND i.status IN ${sql(statuses)}` : sql``}
      ${q.customerId !== undefined ? sql`AND i.customer_id = ${q.customerId}` : sql``}
      ${q.externalReference !== undefined ? sql`AND i.external_reference = ${q.externalReference}` : sql``}
      ${after ? sql`AND i.id < ${after}` : sql``}
    ORDER BY i.id DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: items.map((r) => toInvoice(r)), nextCursor };
}
