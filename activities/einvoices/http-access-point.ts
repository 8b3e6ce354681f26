/**
 * The production e-invoice access point: an access-point provider's HTTP API (EINVOICE_AP_URL). One JSON POST per
 * delivery, `{sender, receiver, profile, documentType, document}` with the document base64, authorised with
 * `Authorization: Bearer EINVOICE_AP_KEY`, and the delivery's id as `Idempotency-Key`: a retried delivery (after a
 * crash, or a timeout whose request did arrive) is the same delivery to the provider, never a second one.
 *
 * What an answer means is the one reading of activities/http/idempotent-post.ts: 2xx delivered; a 4xx refused for
 * good, a DomainError `einvoice_rejected` with the provider's message; a 5xx, a network failure or a timeout retried
 * under the send step's policy. The key and the document are never logged.
 */
import { createIdempotentPost } from '../http/idempotent-post.ts';
import type { EInvoiceAccessPoint, EInvoiceLog } from '../../services/einvoices/einvoice-port.ts';

/** How long one POST may take, up to the whole response. */
export const EINVOICE_TIMEOUT_MS = 30_000;

/** The request body the provider receives. */
export interface EInvoiceRequestBody {
  sender: string;
  receiver: string;
  profile: string;
  documentType: string;
  /** The UBL document, base64. */
  document: string;
}

export function createHttpAccessPoint(opts: { url: string; apiKey: string; log: EInvoiceLog; timeoutMs?: number }): EInvoiceAccessPoint {
  const post = createIdempotentPost({
    url: opts.url,
    partner: 'e-invoice access point',
    what: 'e-invoice',
    takenLog: 'e-invoice handed to the access point',
    rejectedCode: 'einvoice_rejected',
    keyField: 'deliveryId',
    referenceFields: ['reference', 'id', 'messageId'],
    log: opts.log,
    timeoutMs: opts.timeoutMs ?? EINVOICE_TIMEOUT_MS,
  });
  return {
    deliver(d) {
      const body: EInvoiceRequestBody = { sender: d.sender, receiver: d.receiver, profile: d.profile, documentType: d.documentType, document: d.document.toString('base64') };
      return post(d.id, { authorization: `Bearer ${opts.apiKey}` }, JSON.stringify(body), { organizationId: d.organizationId, sha256: d.sha256 });
    },
  };
}
