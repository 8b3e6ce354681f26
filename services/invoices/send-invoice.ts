import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { findInvoiceRow } from './invoice-queries.ts';
import { isIssued } from './invoice-lifecycle.ts';
import { FAILED_SEND_STATUS, INVOICE_SEND_LIFECYCLE, INVOICE_SEND_TRANSITIONS, QUEUED_SEND_STATUS, type InvoiceSendStatus } from './invoice-send-lifecycle.ts';
import { loadBuyer } from './document-parties.ts';
import { recordTimeline } from './record-timeline.ts';
import { eInvoiceAddress } from '../customers/einvoice-address.ts';
import { createPaymentLinkRow } from '../payments/payment-links.ts';

/**
 * `meta.send` of a send (docs/api-conventions.md, "Invoices and credit notes", Sending): its status and channel,
 * `einvoice` for a customer whose issued invoice has an e-invoice address (docs/einvoicing.md), else `email`.
 */
export type SendChannel = 'email' | 'einvoice';
export type SendMeta = { status: 'sent'; channel: SendChannel } | { status: 'failed'; code: string; channel: SendChannel };

/** Starts the mail workflow for an invoice whose send was just committed. Implemented over Restate. */
export interface InvoiceMailDispatch {
  dispatch(organizationId: string, invoiceId: string): Promise<void>;
}

/**
 * Requests the e-mail of an issued invoice, in the caller's transaction.
 *
 * The mail itself goes out after commit, from a durable workflow that retries transient SMTP failures, so a mail
 * failure can never roll back an issue. `{status: "sent"}` therefore means the service has taken the mail for
 * delivery, and the invoice's `sentAt` is set to that moment in the same transaction, so the answer's `data.sentAt`
 * agrees with its `meta.send`; the timeline then shows `sent` (handed to the mail server), `delivered` or
 * `send_failed` (which clears `sentAt` again). Without an address the answer is
 * `{status: "failed", code: "customer_email_missing"}` at once and `sentAt` stays null. A send of an invoice already
 * sent does not mail again; it answers as the first did. After a failed send a new send tries again.
 */
export async function requestInvoiceSend(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  invoiceId: string,
  mailDomain: string,
): Promise<{ send: SendMeta; dispatch: boolean }> {
  const row = await findInvoiceRow(sql, organizationId, invoiceId, { lock: true });
  if (!row) throw notFound('invoice_not_found', 'invoice');
  if (row.type === 'creditNote') throw new DomainError('credit_note_not_sendable', 'Credit notes are not sent by e-mail; download the PDF instead.');
  if (!isIssued(row.status)) {
    throw new DomainError('invoice_not_issued', 'Only an issued invoice can be sent; issue it first.');
  }
  const [previous] = await sql<{ status: InvoiceSendStatus; failure_code: string | null; channel: SendChannel }[]>`
    SELECT status, failure_code, channel FROM invoice_sends WHERE invoice_id = ${invoiceId}`;
  // Sent or delivered: answer as the first send did, mail nothing. Still queued: the first hand-off may have been
  // lost, so hand it on again (the workflow mails a queued send once, whoever asks).
  if (previous && !INVOICE_SEND_LIFECYCLE.can(previous.status, 'retry')) {
    return { send: { status: 'sent', channel: previous.channel }, dispatch: previous.status === QUEUED_SEND_STATUS };
  }
  // The e-invoice goes to the address the issue froze (the document is addressed by it), else the mail to the
  // customer's e-mail address now.
  const [snapshot] = await sql<{ ean: string | null; peppol_id: string | null }[]>`
    SELECT buyer_snapshot->>'ean' AS ean, buyer_snapshot->>'peppolId' AS peppol_id FROM invoices
    WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  const channel: SendChannel = eInvoiceAddress({ ean: snapshot?.ean, peppolId: snapshot?.peppol_id }) ? 'einvoice' : 'email';
  const buyer = await loadBuyer(sql, keyring, organizationId, row.customer_id);
  const messageId = `${invoiceId}.invoice@${mailDomain}`;
  if (channel === 'email' && !buyer.email) {
    await sql`
      INSERT INTO invoice_sends (invoice_id, organization_id, status, failure_code, message_id)
      VALUES (${invoiceId}, ${organizationId}, ${FAILED_SEND_STATUS}, 'customer_email_missing', ${messageId})
      ON CONFLICT (invoice_id) DO UPDATE SET requested_at = now()`;
    await recordTimeline(sql, organizationId, invoiceId, 'send_failed', { code: 'customer_email_missing' });
    return { send: { status: 'failed', code: 'customer_email_missing', channel }, dispatch: false };
  }
  // The mail carries the invoice's payment link: invoices issued before their PDF printed it get theirs now.
  if (channel === 'email') await createPaymentLinkRow(sql, organizationId, invoiceId);
  // After a failure (no address then, a refused or undeliverable mail) a new send tries again, with a new Message-ID.
  await sql`
    INSERT INTO invoice_sends (invoice_id, organization_id, status, message_id, channel)
    VALUES (${invoiceId}, ${organizationId}, ${QUEUED_SEND_STATUS}, ${messageId}, ${channel})
    ON CONFLICT (invoice_id) DO UPDATE
      SET status = ${INVOICE_SEND_TRANSITIONS.retry.to}, failure_code = NULL, channel = ${channel}, last_error = NULL, requested_at = now(),
          message_id = ${`${invoiceId}.invoice.${Date.now()}@${mailDomain}`}
      WHERE invoice_sends.organization_id = ${organizationId}
        AND invoice_sends.status IN ${INVOICE_SEND_LIFECYCLE.in(sql, INVOICE_SEND_TRANSITIONS.retry.from)}`;
  await sql`UPDATE invoices SET sent_at = now(), updated_at = now() WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  return { send: { status: 'sent', channel }, dispatch: true };
}
