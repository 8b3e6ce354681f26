import type { DocumentStore } from '../../services/documents/document-store.ts';
import { MailDeliveryError, type Mailer } from '../../services/mail/mail-port.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import type { Db } from '../../services/shared/db.ts';
import { recordEvent } from '../../services/events/record-event.ts';
import { loadDocumentView } from '../../services/invoices/load-document-view.ts';
import { recordTimeline } from '../../services/invoices/record-timeline.ts';
import { composeInvoiceMail } from '../mail/invoice-mail.ts';

export interface InvoiceMailDeps {
  db: Db;
  keyring: Keyring;
  documents: DocumentStore;
  mailer: Mailer;
  fromAddress: string;
  /** URL of the tracking pixel for an invoice, or null when the API has no public address to put in a mail. */
  trackingPixelUrl: (organizationId: string, invoiceId: string) => string | null;
}

export type DeliveryOutcome = { status: 'sent' | 'delivered' | 'failed' | 'unknown'; code?: string };

/**
 * Mails an issued invoice whose send is queued, with its locked PDF attached, and records what happened.
 *
 * At-least-once safe: the send row decides. Only a queued send is mailed; the same Message-ID goes with every
 * attempt; the outcome is written with a guarded update (status = 'queued'), so a repeated run changes nothing.
 * A transient failure is counted and rethrown for the workflow to retry; a permanent one is recorded as send_failed.
 */
export async function deliverInvoiceMail(deps: InvoiceMailDeps, invoiceId: string): Promise<DeliveryOutcome> {
  const prepared = await deps.db.read(async (sql) => {
    const [send] = await sql<{ organization_id: string; status: 'queued' | 'sent' | 'delivered' | 'failed'; failure_code: string | null; message_id: string }[]>`
      SELECT organization_id, status, failure_code, message_id FROM invoice_sends WHERE invoice_id = ${invoiceId}`;
    if (!send) return { done: { status: 'unknown' } satisfies DeliveryOutcome };
    if (send.status !== 'queued') return { done: { status: send.status, ...(send.failure_code ? { code: send.failure_code } : {}) } satisfies DeliveryOutcome };
    const org = send.organization_id;
    const loaded = await loadDocumentView(sql, deps.keyring, org, invoiceId);
    if (!loaded) return { done: { status: 'unknown' } satisfies DeliveryOutcome };
    const doc = await deps.documents.get(sql, org, loaded.documentSha256);
    return { done: undefined, send, loaded, pdf: doc!.bytes };
  });
  if (prepared.done) return prepared.done;
  const { send, loaded, pdf } = prepared;
  const org = send.organization_id;
  if (!loaded.buyerEmail) return recordFailure(deps, org, invoiceId, 'customer_email_missing', 'the customer has no e-mail address');

  const mail = composeInvoiceMail({
    view: loaded.view,
    seller: { name: loaded.view.seller.name, email: loaded.view.seller.email },
    fromAddress: deps.fromAddress,
    to: loaded.buyerEmail,
    pdf,
    messageId: send.message_id,
    trackingPixelUrl: deps.trackingPixelUrl(org, invoiceId),
    paymentUrl: null,
  });
  let receipt;
  try {
    receipt = await deps.mailer.send(mail);
  } catch (err) {
    if (err instanceof MailDeliveryError && err.permanent) {
      return recordFailure(deps, org, invoiceId, 'mail_rejected', err.message, err.smtpCode);
    }
    await deps.db.tx((tx) => tx`
      UPDATE invoice_sends SET attempts = attempts + 1, last_error = ${String((err as Error).message).slice(0, 500)}
      WHERE invoice_id = ${invoiceId} AND status = 'queued'`);
    throw err;
  }
  const status = receipt.accepted ? 'delivered' : 'sent';
  await deps.db.tx(async (tx) => {
    const [updated] = await tx`
      UPDATE invoice_sends SET status = ${status}, sent_at = now(), attempts = attempts + 1, last_error = NULL
      WHERE invoice_id = ${invoiceId} AND status = 'queued' RETURNING 1`;
    if (!updated) return;
    await tx`SELECT 1 FROM invoices WHERE organization_id = ${org} AND id = ${invoiceId} FOR UPDATE`;
    await tx`UPDATE invoices SET sent_at = now(), updated_at = now() WHERE organization_id = ${org} AND id = ${invoiceId}`;
    await recordTimeline(tx, org, invoiceId, 'sent', { messageId: receipt.messageId });
    if (receipt.accepted) await recordTimeline(tx, org, invoiceId, 'delivered', { response: receipt.response.slice(0, 200) });
    await recordEvent(tx, {
      organizationId: org,
      type: 'invoice.sent',
      family: 'invoice',
      entityId: invoiceId,
      data: { invoiceId, number: loaded.view.number, channel: 'email', externalReference: loaded.externalReference },
    });
  });
  return { status };
}

/** A send that will never succeed as it is: recorded once, shown on the timeline as send_failed. */
export async function recordFailure(
  deps: Pick<InvoiceMailDeps, 'db'>,
  organizationId: string,
  invoiceId: string,
  code: string,
  reason: string,
  smtpCode?: number,
): Promise<DeliveryOutcome> {
  await deps.db.tx(async (tx) => {
    const [updated] = await tx`
      UPDATE invoice_sends SET status = 'failed', failure_code = ${code}, attempts = attempts + 1, last_error = ${reason.slice(0, 500)}
      WHERE invoice_id = ${invoiceId} AND status = 'queued' RETURNING 1`;
    if (updated) await recordTimeline(tx, organizationId, invoiceId, 'send_failed', { code, ...(smtpCode ? { smtpCode } : {}) });
  });
  return { status: 'failed', code };
}
