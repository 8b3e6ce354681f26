import type { InvoiceMailDispatch } from './send-invoice.ts';
import { sendToRestate } from '../shared/restate-ingress.ts';

/**
 * Hands a committed send to the InvoiceMail workflow through Restate's ingress as a one-way call (202): the API does
 * not wait for the mail server. Only the invoice id travels; the workflow reads everything else from the database.
 */
export function createRestateMailDispatch(ingressUrl: string): InvoiceMailDispatch {
  return {
    dispatch: (_organizationId, invoiceId) => sendToRestate(ingressUrl, `InvoiceMail/${encodeURIComponent(invoiceId)}/deliver`, 'mail hand-off'),
  };
}
