import { WORK } from '../../contracts/workflows.ts';
import type { Db } from '../shared/db.ts';
import { createEngineClient } from '../shared/engine-client.ts';
import type { InvoiceMailDispatch } from './send-invoice.ts';

/**
 * Hands a committed send to its InvoiceMail object (key: the invoice id) as a one-way call: the API does not wait
 * for the mail server. Only the invoice id travels; the workflow reads everything else from the database. The
 * queued send is in the wake index from its commit on, so a lost hand-off is picked up by the housekeeping loop.
 */
export function createRestateMailDispatch(ingressUrl: string, db: Db): InvoiceMailDispatch {
  const engine = createEngineClient(ingressUrl, db);
  return { dispatch: (_organizationId, invoiceId) => engine.poke(WORK.invoiceMail(invoiceId)) };
}
