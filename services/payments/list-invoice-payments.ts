import type { Payment, PaymentListQuery } from '../../contracts/payments.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { PAYMENT_COLUMNS, toPayment, type PaymentRow } from './payment-queries.ts';

/** One invoice's payments, newest registration first (spec 4.5). A credit note has none. */
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
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'invoice-payments', filters: [invoiceId.toLowerCase()] };
  const after = q.cursor ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const rows = await sql<PaymentRow[]>`
    SELECT ${sql(PAYMENT_COLUMNS)} FROM payments
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}
      ${after ? sql`AND id < ${after}` : sql``}
    ORDER BY id DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: items.map(toPayment), nextCursor };
}
