import type { PaymentCreate } from '../../contracts/payments.ts';
import type { Clock } from '../shared/clock.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { bookPayment } from './book-payment.ts';
import type { ReceiptDispatch } from './receipt-dispatch.ts';

export interface PaymentRegistrationDeps {
  clock: Clock;
  /** Hands the booked payment's receipt to the PaymentReceipt workflow; without it the housekeeping loop does. */
  receiptDispatch?: ReceiptDispatch | undefined;
}

/**
 * POST /v1/invoices/{id}/payments (the route, and the batch's payment.register): books a manual payment on
 * `bookingKey`, which stays with the payment. `onReplayed` is told when the key had booked it already.
 */
export function registerPayment(
  deps: PaymentRegistrationDeps,
  organizationId: string,
  invoiceId: string,
  body: PaymentCreate,
  bookingKey: string,
  onReplayed?: () => void,
): MutationUseCase {
  const receipts = deps.receiptDispatch;
  return async (tx, request) => {
    const booked = await bookPayment(
      tx,
      deps,
      organizationId,
      invoiceId,
      { source: 'manual', bookingKey, amountOere: body.amountOere, paymentDate: body.paymentDate },
      { deferWrites: { now: request.now } },
    );
    if (booked.replayed) onReplayed?.();
    return {
      status: 201,
      data: booked.invoice,
      meta: { outcome: booked.outcome, paymentId: booked.payment.id, ...(booked.replayed ? { replayed: true } : {}) },
      location: `/v1/payments/${booked.payment.id}`,
      ...(booked.written ? { pending: booked.written } : {}),
      // The receipt is rendered by the PaymentReceipt workflow once the payment is committed.
      ...(!booked.replayed && receipts ? { afterCommit: () => receipts.dispatch(booked.payment.id) } : {}),
    };
  };
}
