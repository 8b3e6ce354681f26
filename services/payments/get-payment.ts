import type { Payment } from '../../contracts/payments.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { PAYMENT_COLUMNS, toPayment, type PaymentRow } from './payment-queries.ts';

export async function getPayment(sql: Queryable, organizationId: string, id: string): Promise<Payment> {
  if (!isUuid(id)) throw notFound('payment_not_found', 'payment');
  const [row] = await sql<PaymentRow[]>`
    SELECT ${sql(PAYMENT_COLUMNS)} FROM payments WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (!row) throw notFound('payment_not_found', 'payment');
  return toPayment(row);
}
