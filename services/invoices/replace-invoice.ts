import type { Invoice, InvoiceReplace } from '../../contracts/invoices.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { assertCustomerExists } from '../customers/department-queries.ts';
import { findInvoiceRow, getInvoiceOrThrow, writeLines } from './invoice-queries.ts';
import { INVOICE_LIFECYCLE, INVOICE_STATUS } from './invoice-lifecycle.ts';

export const notEditable = () =>
  new DomainError('invoice_not_editable', 'Only a draft can be changed or deleted; an issued invoice is immutable.');

/** PUT: replaces a draft as a whole (every omitted optional field becomes null) and recalculates its lines. */
export async function replaceInvoice(sql: Queryable, organizationId: string, id: string, input: InvoiceReplace): Promise<Invoice> {
  const row = await findInvoiceRow(sql, organizationId, id, { lock: true });
  if (!row) throw notFound('invoice_not_found', 'invoice');
  if (row.status !== INVOICE_STATUS.draft || row.type !== 'invoice') throw notEditable();
  await assertCustomerExists(sql, organizationId, input.customerId);
  const totals = await writeLines(sql, organizationId, id, input.lines);
  await sql`
    UPDATE invoices SET ${sql({
      customer_id: input.customerId,
      due_date: input.dueDate ?? null,
      payment_terms_days: input.paymentTermsDays ?? null,
      net_oere: totals.netOere,
      vat_oere: totals.vatOere,
      gross_oere: totals.grossOere,
      customer_reference: input.customerReference ?? null,
      sender_reference: input.senderReference ?? null,
      buyer_reference: input.buyerReference ?? null,
      order_reference: input.orderReference ?? null,
      message: input.message ?? null,
      heading: input.heading ?? null,
      external_reference: input.externalReference ?? null,
      metadata: input.metadata ?? null,
    } as Record<string, unknown>)}, updated_at = now()
    WHERE organization_id = ${organizationId} AND id = ${id} AND status IN ${INVOICE_LIFECYCLE.in(sql, [INVOICE_STATUS.draft])}`;
  return getInvoiceOrThrow(sql, organizationId, id);
}
