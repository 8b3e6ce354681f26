import { sendToRestate } from '../shared/restate-ingress.ts';

/** Hands a booked payment's receipt to the PaymentReceipt workflow. Implemented over Restate. */
export interface ReceiptDispatch {
  dispatch(paymentId: string): Promise<void>;
}

/**
 * The hand-off over Restate's ingress as a one-way call (202): the caller does not wait for the rendering. Only the
 * payment id travels; the workflow reads everything else from the database. Safe to repeat: rendering is idempotent.
 */
export function createRestateReceiptDispatch(ingressUrl: string): ReceiptDispatch {
  return {
    dispatch: (paymentId) => sendToRestate(ingressUrl, `PaymentReceipt/${encodeURIComponent(paymentId)}/render`, 'receipt hand-off'),
  };
}
