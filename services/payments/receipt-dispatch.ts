import { WORK } from '../../contracts/workflows.ts';
import type { Db } from '../shared/db.ts';
import { createEngineClient } from '../shared/engine-client.ts';

/** Hands a booked payment's receipt to the PaymentReceipt workflow. Implemented over Restate. */
export interface ReceiptDispatch {
  dispatch(paymentId: string): Promise<void>;
}

/**
 * The hand-off as a one-way call to the payment's PaymentReceipt object: the caller does not wait for the
 * rendering. Safe to repeat: rendering is idempotent. The receipt request is in the wake index from the payment's
 * commit on (a trigger), so a lost hand-off is picked up by the housekeeping loop.
 */
export function createRestateReceiptDispatch(ingressUrl: string, db: Db): ReceiptDispatch {
  const engine = createEngineClient(ingressUrl, db);
  return { dispatch: (paymentId) => engine.poke(WORK.paymentReceipt(paymentId)) };
}
