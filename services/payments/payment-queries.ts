import type { Payment, PaymentOutcome, PaymentSource } from '../../contracts/payments.ts';
import type { Queryable } from '../shared/db.ts';

/** The columns every payment read selects, and how a row becomes the API shape. */
export interface PaymentRow {
  id: string;
  invoice_id: string;
  customer_id: string;
  source: PaymentSource;
  booking_key: string;
  amount_oere: number;
  payment_date: string;
  outcome: PaymentOutcome;
  surplus_oere: number;
  created_at: Date;
}

export const PAYMENT_COLUMNS = [
  'id', 'invoice_id', 'customer_id', 'source', 'booking_key', 'amount_oere', 'payment_date', 'outcome', 'surplus_oere', 'created_at',
] as const;

/**
 * Whether a payment's booking key is a payment provider's id, shown as `providerPaymentId`: a card or mobile-wallet
 * payment's. A manual payment's key is the caller's Idempotency-Key (theirs already, not a reference to show back);
 * a bank payment's is its statement entry's identity (the entry shows it).
 */
export const hasProviderPaymentId = (source: PaymentSource): boolean => source === 'card' || source === 'mobilepay';

export function toPayment(r: PaymentRow): Payment {
  return {
    id: r.id,
    invoiceId: r.invoice_id,
    customerId: r.customer_id,
    source: r.source,
    amountOere: r.amount_oere,
    paymentDate: r.payment_date,
    outcome: r.outcome,
    surplusOere: r.surplus_oere,
    providerPaymentId: hasProviderPaymentId(r.source) ? r.booking_key : null,
    createdAt: r.created_at.toISOString(),
  };
}

export async function findPaymentByBookingKey(
  sql: Queryable,
  organizationId: string,
  source: PaymentSource,
  bookingKey: string,
): Promise<PaymentRow | undefined> {
  const [row] = await sql<PaymentRow[]>`
    SELECT ${sql(PAYMENT_COLUMNS)} FROM payments
    WHERE organization_id = ${organizationId} AND source = ${source} AND booking_key = ${bookingKey}`;
  return row;
}
