import type { Payment, PaymentListQuery } from '../../contracts/payments.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { listPayments } from './list-payments.ts';

/**
 * One invoice's payments, newest registration first (docs/api-conventions.md, "Payments and balances", Lists); an
 * unknown or foreign invoice is its 404. A credit note has none.
 */
export async function listInvoicePayments(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  invoiceId: string,
  q: PaymentListQuery,
): Promise<{ items: Payment[]; nextCursor: string | null }> {
  if (!isUuid(invoiceId)) throw notFound('invoice_not_found', 'invoice');
  const [invoice] = await sql`SELECT 1 FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  if (!invoice) throw notFound('invoice_not_found', 'invoice');
  return listPayments(sql, keyring, organizationId, q, invoiceId);
}
