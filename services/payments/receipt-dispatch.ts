/** Hands a booked payment's receipt to the PaymentReceipt workflow. Implemented over Restate. */
export interface ReceiptDispatch {
  dispatch(paymentId: string): Promise<void>;
}

/**
 * The hand-off over Restate's ingress as a one-way call (202): the caller does not wait for the rendering. Only the
 * payment id travels; the workflow reads everything else from the database. Safe to repeat: rendering is idempotent.
 */
export function createRestateReceiptDispatch(ingressUrl: string): ReceiptDispatch {
  const base = ingressUrl.replace(/\/+$/, '');
  return {
    async dispatch(paymentId) {
      const res = await fetch(`${base}/PaymentReceipt/${encodeURIComponent(paymentId)}/render/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: 'null',
        signal: AbortSignal.timeout(5000),
      });
      if (res.status !== 202 && res.status !== 200) throw new Error(`Restate refused the receipt hand-off: ${res.status} ${await res.text()}`);
    },
  };
}
