import { MailDeliveryError, type OutgoingMail } from '../../services/mail/mail-port.ts';
import { recordEvent } from '../../services/events/record-event.ts';
import { loadDocumentView } from '../../services/invoices/load-document-view.ts';
import { recordTimeline } from '../../services/invoices/record-timeline.ts';
import { refused, type ChannelOutcome, type DeliveryDeps, type Refused } from '../../services/dispatch/channels.ts';
import { deliverDocument, type DocumentKind } from '../../services/dispatch/deliver-document.ts';
import type { DeliveryRecord } from '../../services/dispatch/record-delivery.ts';
import { storedDocument } from '../../services/dispatch/stored-document.ts';
import { INVOICE_SEND_LIFECYCLE, type InvoiceSendStatus } from '../../services/invoices/invoice-send-lifecycle.ts';
import { composeInvoiceMail } from '../mail/invoice-mail.ts';
import type { SendChannel } from '../../services/invoices/send-invoice.ts';
import type { EInvoiceAccessPoint, EInvoiceDelivery } from '../../services/einvoices/einvoice-port.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { eInvoiceAddress } from '../../services/customers/einvoice-address.ts';
import { getEInvoice } from '../../services/einvoices/get-einvoice.ts';

export interface InvoiceMailDeps extends Omit<DeliveryDeps, 'letters'> {
  /** The e-invoice access point, for customers whose issued invoice has an e-invoice address. */
  einvoices: EInvoiceAccessPoint;
  /** URL of the tracking pixel for an invoice, or null when the API has no public address to put in a mail. */
  trackingPixelUrl: (organizationId: string, invoiceId: string) => string | null;
  /** The pay page's address (PAY_BASE_URL), the base of the payment link the mail carries. */
  payBaseUrl?: string | undefined;
}

export type DeliveryOutcome = { status: 'sent' | 'delivered' | 'failed' | 'unknown'; code?: string };

/** What one mail step did; Restate journals it, so recording it again after a crash never mails again. */
export type MailAttempt =
  | { kind: 'settled'; outcome: DeliveryOutcome }
  | { kind: 'mailed'; messageId: string; accepted: boolean; response: string; number: number; externalReference: string | null }
  | { kind: 'einvoiced'; reference: string; sha256: string; number: number; externalReference: string | null }
  | Refused;

type ReadyInvoice = { send: { organization_id: string; message_id: string; channel: SendChannel }; loaded: NonNullable<Awaited<ReturnType<typeof loadDocumentView>>>; pdf: Buffer };

/** The invoice (or credit note) as a kind of outbound document: by e-mail to the customer, under the send's Message-ID. */
export const INVOICE_MAIL_DOCUMENT: DocumentKind<InvoiceMailDeps, ReadyInvoice, MailAttempt> = {
  prepare: (deps, invoiceId) =>
    deps.db.read(async (sql) => {
      const [send] = await sql<{ organization_id: string; status: InvoiceSendStatus; failure_code: string | null; message_id: string; channel: SendChannel }[]>`
        SELECT organization_id, status, failure_code, message_id, channel FROM invoice_sends WHERE invoice_id = ${invoiceId}`;
      if (!send) return { settled: { kind: 'settled', outcome: { status: 'unknown' } } };
      if (send.status !== INVOICE_SEND_LIFECYCLE.state.queued) return { settled: { kind: 'settled', outcome: { status: send.status, ...(send.failure_code ? { code: send.failure_code } : {}) } } };
      const loaded = await loadDocumentView(sql, deps.keyring, send.organization_id, invoiceId, deps.payBaseUrl);
      if (!loaded) return { settled: { kind: 'settled', outcome: { status: 'unknown' } } };
      const pdf = await storedDocument(sql, deps.documents, send.organization_id, loaded.documentSha256, `invoice ${invoiceId}`);
      return { ready: { send, loaded, pdf } };
    }),
  recipient: ({ send, loaded }) => {
    if (send.channel === 'einvoice') {
      const address = eInvoiceAddress(loaded.view.buyer);
      return address ? { channel: 'einvoice', receiver: `${address.scheme}:${address.identifier}` } : refused('einvoice_not_possible', 'the issued invoice has no e-invoice address');
    }
    return loaded.buyerEmail ? { channel: 'email', name: loaded.view.buyer.name, email: loaded.buyerEmail } : refused('customer_email_missing', 'the customer has no e-mail address');
  },
  outbound: ({ send, loaded, pdf }, deps, invoiceId) => ({
    // The invoice's e-invoice, made and stored write-once in its default profile (the one GET …/einvoice answers),
    // delivered under the send's id: a delivery that runs again is the same delivery to the access point.
    einvoice: async (to) => {
      const doc = await getEInvoice(deps.db, deps.documents, send.organization_id, invoiceId, 'invoice', undefined);
      return {
        id: send.message_id,
        organizationId: send.organization_id,
        sender: `0184:${loaded.view.seller.cvr}`,
        receiver: to.receiver,
        profile: doc.profile,
        documentType: 'Invoice',
        document: doc.bytes,
        sha256: doc.sha256,
      };
    },
    mail: (to) =>
      composeInvoiceMail({
        view: loaded.view,
        seller: { name: loaded.view.seller.name, email: loaded.view.seller.email },
        fromAddress: deps.fromAddress,
        to: to.email,
        pdf,
        messageId: send.message_id,
        trackingPixelUrl: deps.trackingPixelUrl(send.organization_id, invoiceId),
        paymentUrl: loaded.view.paymentLink?.url ?? null,
      }),
  }),
  answer: (sent, { loaded }) => {
    if (sent.kind === 'refused') return sent;
    if (sent.channel === 'einvoice') {
      return { kind: 'einvoiced', reference: sent.reference, sha256: sent.sha256, number: loaded.view.number, externalReference: loaded.externalReference };
    }
    const { messageId, accepted, response } = sent as Extract<ChannelOutcome, { channel: 'email' }>;
    return { kind: 'mailed', messageId, accepted, response, number: loaded.view.number, externalReference: loaded.externalReference };
  },
};

/**
 * Step 1: mails an issued invoice whose send is queued, with its locked PDF attached. Writes nothing but the attempt
 * counter: what happened is recorded by step 2 from this step's journaled result, so a failure while recording
 * cannot cause a second mail. A transient failure is counted on the send (for the operator) and rethrown for the
 * workflow to retry.
 */
export function mailInvoice(deps: InvoiceMailDeps, invoiceId: string): Promise<MailAttempt> {
  const counted = async (err: unknown, permanent: boolean): Promise<never> => {
    if (!permanent) {
      await deps.db.tx((tx) => tx`
        UPDATE invoice_sends SET attempts = attempts + 1, last_error = ${String((err as Error).message).slice(0, 500)}
        WHERE invoice_id = ${invoiceId} AND status IN ${INVOICE_SEND_LIFECYCLE.in(tx, [INVOICE_SEND_LIFECYCLE.state.queued])}`);
    }
    throw err;
  };
  const send = (mail: OutgoingMail) => deps.mailer.send(mail).catch((err: unknown) => counted(err, err instanceof MailDeliveryError && err.permanent));
  const deliver = (d: EInvoiceDelivery) => deps.einvoices.deliver(d).catch((err: unknown) => counted(err, err instanceof DomainError && err.code === 'einvoice_rejected'));
  return deliverDocument(INVOICE_MAIL_DOCUMENT, { ...deps, mailer: { send }, einvoices: { deliver } }, invoiceId);
}

/**
 * Step 2: records what step 1 did, through the send's guarded transition from queued, so that running it twice changes nothing: the send
 * row, the invoice's sentAt, the timeline (sent, delivered, send_failed) and the invoice.sent event, in one transaction.
 */
export async function recordInvoiceMail(deps: Pick<InvoiceMailDeps, 'db'>, invoiceId: string, attempt: MailAttempt): Promise<DeliveryOutcome> {
  if (attempt.kind === 'settled') return attempt.outcome;
  const [send] = await deps.db.read((sql) => sql<{ organization_id: string }[]>`SELECT organization_id FROM invoice_sends WHERE invoice_id = ${invoiceId}`);
  if (!send) return { status: 'unknown' };
  const org = send.organization_id;
  if (attempt.kind === 'refused') return recordFailure(deps, org, invoiceId, attempt.code, attempt.reason, attempt.smtpCode);
  const einvoice = attempt.kind === 'einvoiced';
  // An access point's 2xx takes the document for delivery: `sent`, like a mail the server took.
  const transition = !einvoice && attempt.accepted ? 'deliver' : 'send';
  await deps.db.tx(async (tx) => {
    await tx`SELECT 1 FROM invoices WHERE organization_id = ${org} AND id = ${invoiceId} FOR UPDATE`;
    // A send no longer queued was recorded already (this step ran before a crash): nothing more to write.
    const updated = await INVOICE_SEND_LIFECYCLE.tryTransition(tx, invoiceId, transition, {
      organizationId: org,
      set: tx`sent_at = now(), attempts = attempts + 1, last_error = NULL`,
    });
    if (!updated) return;
    // sentAt was set when the send was taken (requestInvoiceSend); a send queued before that rule gets it here.
    await tx`UPDATE invoices SET sent_at = coalesce(sent_at, now()), updated_at = now() WHERE organization_id = ${org} AND id = ${invoiceId}`;
    if (einvoice) {
      await recordTimeline(tx, org, invoiceId, 'einvoice_sent', { reference: attempt.reference, sha256: attempt.sha256 });
    } else {
      await recordTimeline(tx, org, invoiceId, 'sent', { messageId: attempt.messageId });
      if (attempt.accepted) await recordTimeline(tx, org, invoiceId, 'delivered', { response: attempt.response });
    }
    await recordEvent(tx, {
      organizationId: org,
      type: 'invoice.sent',
      entityId: invoiceId,
      data: { invoiceId, number: attempt.number, channel: einvoice ? 'einvoice' : 'email', externalReference: attempt.externalReference },
    });
  });
  return { status: INVOICE_SEND_LIFECYCLE.transitions[transition].to };
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
    // The invoice first, as a send request and recordInvoiceMail take them, since its sentAt changes too.
    await tx`SELECT 1 FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId} FOR UPDATE`;
    const updated = await INVOICE_SEND_LIFECYCLE.tryTransition(tx, invoiceId, 'fail', {
      organizationId,
      set: tx`failure_code = ${code}, attempts = attempts + 1, last_error = ${reason.slice(0, 500)}`,
    });
    if (!updated) return;
    // The invoice was not sent after all: sentAt, set when the send was taken, goes back to null until a new send.
    await tx`UPDATE invoices SET sent_at = NULL, updated_at = now() WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
    const [send] = await tx<{ channel: SendChannel }[]>`SELECT channel FROM invoice_sends WHERE invoice_id = ${invoiceId}`;
    if (send?.channel === 'einvoice') {
      // The access point's refusal, in its own words, is what the bookkeeper needs to put it right.
      await recordTimeline(tx, organizationId, invoiceId, 'einvoice_failed', { code, message: reason.slice(0, 500) });
    } else {
      await recordTimeline(tx, organizationId, invoiceId, 'send_failed', { code, ...(smtpCode ? { smtpCode } : {}) });
    }
  });
  return { status: INVOICE_SEND_LIFECYCLE.transitions.fail.to, code };
}

/** The mail step exhausted its retries: the send is recorded as failed (`mail_undeliverable`) with the last error. */
export async function markInvoiceMailUndeliverable(deps: Pick<InvoiceMailDeps, 'db'>, invoiceId: string, reason: string): Promise<DeliveryOutcome> {
  const [send] = await deps.db.read((sql) => sql<{ organization_id: string; channel: SendChannel }[]>`
    SELECT organization_id, channel FROM invoice_sends WHERE invoice_id = ${invoiceId}`);
  if (!send) return { status: 'unknown' };
  return recordFailure(deps, send.organization_id, invoiceId, send.channel === 'einvoice' ? 'einvoice_undeliverable' : 'mail_undeliverable', reason);
}

/** How the invoice mail records its delivery (`recordDelivery('invoice', …)`): on its send row, keyed by the invoice. */
export const INVOICE_MAIL_RECORD: DeliveryRecord<string, MailAttempt, DeliveryOutcome> = {
  record: (db, invoiceId, attempt) => recordInvoiceMail({ db }, invoiceId, attempt),
  giveUp: (db, invoiceId, reason) => markInvoiceMailUndeliverable({ db }, invoiceId, reason),
};
