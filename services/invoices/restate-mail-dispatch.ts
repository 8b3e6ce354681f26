import type { InvoiceMailDispatch } from './send-invoice.ts';

/**
 * Hands a committed send to the InvoiceMail workflow through Restate's ingress as a one-way call (202): the API does
 * not wait for the mail server. Only the invoice id travels; the workflow reads everything else from the database.
 */
export function createRestateMailDispatch(ingressUrl: string): InvoiceMailDispatch {
  const base = ingressUrl.replace(/\/+$/, '');
  return {
    async dispatch(_organizationId, invoiceId) {
      const res = await fetch(`${base}/InvoiceMail/${encodeURIComponent(invoiceId)}/deliver/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: 'null',
        signal: AbortSignal.timeout(5000),
      });
      if (res.status !== 202 && res.status !== 200) throw new Error(`Restate refused the mail hand-off: ${res.status} ${await res.text()}`);
    },
  };
}
