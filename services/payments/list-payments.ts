import type { Payment, PaymentListQuery } from '../../contracts/payments.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { PAYMENT_COLUMNS, toPayment, type PaymentRow } from './payment-queries.ts';

/**
 * Every payment of the organisation (or of one invoice, `invoiceId`), from every channel, newest registration first,
 * for reconciliation. Keyset on the time-ordered id: payments booked while a client pages sort before its cursor, so
 * no page skips or repeats one. A cursor belongs to the list it came from (the organisation's or that invoice's).
 */
export async function listPayments(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: PaymentListQuery,
  invoiceId?: string,
): Promise<{ items: Payment[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = invoiceId
    ? { organizationId, list: 'invoice-payments', filters: [invoiceId.toLowerCase()] }
    : { organizationId, list: 'payments', filters: [] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const rows = await sql<PaymentRow[]>`
    SELECT ${sql(PAYMENT_COLUMNS)} FROM payments
    WHERE organization_id = ${organizationId}
      ${invoiceId ? sql`AND invoice_id = ${invoiceId}` : sql``}
      ${after ? sql`AND id < ${after}` : sql``}
    ORDER BY id DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: items.map(toPayment), nextCursor };
}
