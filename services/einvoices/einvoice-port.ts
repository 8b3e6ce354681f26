/**
 * What the service asks of an e-invoice access point (NemHandel / Peppol): one UBL document delivered from the seller
 * to the buyer's e-invoice address. The invoice send uses it for customers with an e-invoice address
 * (services/dispatch/channels.ts, channel `einvoice`); activities/einvoices/ implements it (files under
 * DATA_DIR/einvoices on a developer's machine, an access-point provider's HTTP API in production).
 *
 * A delivery runs inside a durable step that may run again after a crash, so the caller chooses the delivery's id
 * (the send's id): an adapter handed the same id again reports the first delivery, never makes a second one.
 */
export interface EInvoiceDelivery {
  /** The caller's id of this delivery: the idempotency key. */
  id: string;
  organizationId: string;
  /** The seller's participant id, `0184:<CVR>`. */
  sender: string;
  /** The buyer's e-invoice address, `<scheme>:<identifier>`. */
  receiver: string;
  profile: 'peppol-bis-3' | 'oioubl';
  documentType: 'Invoice' | 'CreditNote';
  /** The UBL document, exactly as stored, and its SHA-256 (hex). */
  document: Buffer;
  sha256: string;
}

export interface EInvoiceAccessPoint {
  /**
   * Resolves once the access point took the document, with its reference (or the delivery's id). A document the
   * provider refuses for good rejects with DomainError `einvoice_rejected` carrying the provider's message (not
   * retried); anything else that rejects (unreachable, a 5xx, a timeout) may go through when tried again.
   */
  deliver(delivery: EInvoiceDelivery): Promise<{ reference: string }>;
}

/** Same shape as the workflows' JSON log line (and LetterLog). */
export type EInvoiceLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
