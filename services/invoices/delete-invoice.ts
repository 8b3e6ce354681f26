import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { findInvoiceRow } from './invoice-queries.ts';
import { notEditable } from './replace-invoice.ts';
import { INVOICE_LIFECYCLE, INVOICE_STATUS } from './invoice-lifecycle.ts';

/** Removes a draft with its lines and timeline. Issued invoices are never deleted. */
export async function deleteInvoice(sql: Queryable, organizationId: string, id: string): Promise<void> {
  const row = await findInvoiceRow(sql, organizationId, id, { lock: true });
  if (!row) throw notFound('invoice_not_found', 'invoice');
  if (row.status !== INVOICE_STATUS.draft || row.type !== 'invoice') throw notEditable();
  await sql`DELETE FROM invoices WHERE organization_id = ${organizationId} AND id = ${id} AND status IN ${INVOICE_LIFECYCLE.in(sql, [INVOICE_STATUS.draft])}`;
}
