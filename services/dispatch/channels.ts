/**
 * The channels an outbound document goes out by, behind one port: e-mail (services/mail/mail-port.ts), letter
 * (services/letters/letter-port.ts) and e-invoice (services/einvoices/einvoice-port.ts). Every document kind (deliver-document.ts)
 * chooses its recipient and composes its mail or letter; `sendDocument` hands it over and says, in one vocabulary,
 * what became of it:
 *
 * - `sent`, with the reference its delivery record keeps (the mail's Message-ID, the letter's reference);
 * - `refused` for good, with a refusal code: the mail server's 5xx (`mail_rejected`), the letter service's 4xx
 *   (`letter_rejected`), the access point's 4xx (`einvoice_rejected`), an e-invoice the issued document cannot make
 *   (`einvoice_not_possible`), or nobody to send it to (`customer_email_missing`, `customer_address_missing`,
 *   `debtor_unreachable`);
 * - anything that may go through later (SMTP 4xx or unreachable, the letter service's 5xx or no answer) is thrown,
 *   for the dispatch step's retry policy (workflows/shared/dispatch.ts).
 *
 * The send runs inside a durable step that may run again: the mail's Message-ID and the letter's id are the
 * document's own, so a retried send is the same mail or letter.
 */
import type { DocumentStore } from '../documents/document-store.ts';
import type { Letter, LetterAddress, LetterService } from '../letters/letter-port.ts';
import { MailDeliveryError, type Mailer, type OutgoingMail } from '../mail/mail-port.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Db } from '../shared/db.ts';
import type { EInvoiceAccessPoint, EInvoiceDelivery } from '../einvoices/einvoice-port.ts';
import { DomainError } from '../shared/errors.ts';
import { recordDocumentDelivery } from '../observability/metrics.ts';

export type RefusalCode =
  | 'mail_rejected'
  | 'letter_rejected'
  | 'einvoice_rejected'
  | 'einvoice_not_possible'
  | 'customer_email_missing'
  | 'customer_address_missing'
  | 'debtor_unreachable';

export type PostalAddress = LetterAddress & { country: string };

/** Whom a document goes to, by which channel. */
export type Recipient =
  | { channel: 'email'; name: string; email: string }
  | { channel: 'letter'; address: PostalAddress }
  | { channel: 'einvoice'; receiver: string };

export type Refused = { kind: 'refused'; code: RefusalCode; reason: string; smtpCode?: number };

export type ChannelOutcome =
  | { kind: 'sent'; channel: 'email'; messageId: string; accepted: boolean; response: string }
  | { kind: 'sent'; channel: 'letter'; reference: string }
  | { kind: 'sent'; channel: 'einvoice'; reference: string; sha256: string }
  | Refused;

export interface Channels {
  mailer: Mailer;
  letters?: LetterService;
  einvoices?: EInvoiceAccessPoint;
}

/** What a deliverer needs: the database, the keyring, the stored documents and the channels. */
export interface DeliveryDeps extends Channels {
  db: Db;
  keyring: Keyring;
  documents: DocumentStore;
  letters: LetterService;
  /** The service's own sending address (MAIL_FROM_ADDRESS). */
  fromAddress: string;
}

/** What one document is on each channel: its mail for an e-mail recipient, its letter for a postal one. */
export interface Outbound {
  mail: (to: Extract<Recipient, { channel: 'email' }>) => OutgoingMail;
  letter?: (to: PostalAddress) => Letter;
  /** The e-invoice delivery to the recipient's e-invoice address (made and stored write-once on the first call). */
  einvoice?: (to: Extract<Recipient, { channel: 'einvoice' }>) => Promise<EInvoiceDelivery>;
}

export const refused = (code: RefusalCode, reason: string): Refused => ({ kind: 'refused', code, reason });

/** A postal recipient when the address is whole (street, postal code and city), else null. */
export function postalRecipient(
  name: string,
  a: { street: string | null; postalCode: string | null; city: string | null; country: string | null },
): Recipient | null {
  return a.street && a.postalCode && a.city
    ? { channel: 'letter', address: { name, street: a.street, postalCode: a.postalCode, city: a.city, country: a.country ?? 'DK' } }
    : null;
}

/** The letter of a stored document, from the organisation's address (blank where it has none) to `to`. */
export function documentLetter(
  letter: Omit<Letter, 'recipient' | 'sender'>,
  sender: { name: string; street: string | null; postalCode: string | null; city: string | null },
): (to: PostalAddress) => Letter {
  return (to) => ({ ...letter, recipient: to, sender: { name: sender.name, street: sender.street ?? '', postalCode: sender.postalCode ?? '', city: sender.city ?? '' } });
}

/** The reference a delivery record keeps of a sent document: the mail's Message-ID or the letter's reference. */
export const sentReference = (sent: Extract<ChannelOutcome, { kind: 'sent' }>): string => (sent.channel === 'email' ? sent.messageId : sent.reference);

async function sendEInvoice(channels: Channels, to: Extract<Recipient, { channel: 'einvoice' }>, outbound: Outbound): Promise<ChannelOutcome> {
  if (!channels.einvoices || !outbound.einvoice) throw new Error('this document has no e-invoice channel');
  try {
    const delivery = await outbound.einvoice(to);
    const sent = await channels.einvoices.deliver(delivery);
    return { kind: 'sent', channel: 'einvoice', reference: sent.reference, sha256: delivery.sha256 };
  } catch (err) {
    if (err instanceof DomainError && (err.code === 'einvoice_rejected' || err.code === 'einvoice_not_possible')) return refused(err.code, err.message.slice(0, 1000));
    throw err;
  }
}

/** Hands the document to its channel; every outcome counts in the metrics (`faktura_document_deliveries_total`). */
export async function sendDocument(channels: Channels, to: Recipient, outbound: Outbound): Promise<ChannelOutcome> {
  try {
    const outcome = await sendByChannel(channels, to, outbound);
    recordDocumentDelivery(to.channel, outcome.kind);
    return outcome;
  } catch (err) {
    recordDocumentDelivery(to.channel, 'failed');
    throw err;
  }
}

async function sendByChannel(channels: Channels, to: Recipient, outbound: Outbound): Promise<ChannelOutcome> {
  if (to.channel === 'einvoice') return sendEInvoice(channels, to, outbound);
  if (to.channel === 'email') {
    try {
      const receipt = await channels.mailer.send(outbound.mail(to));
      return { kind: 'sent', channel: 'email', messageId: receipt.messageId, accepted: receipt.accepted, response: receipt.response.slice(0, 200) };
    } catch (err) {
      if (!(err instanceof MailDeliveryError && err.permanent)) throw err;
      return { ...refused('mail_rejected', err.message.slice(0, 1000)), ...(err.smtpCode ? { smtpCode: err.smtpCode } : {}) };
    }
  }
  if (!channels.letters || !outbound.letter) throw new Error('this document has no letter channel');
  try {
    const sent = await channels.letters.send(outbound.letter(to.address));
    return { kind: 'sent', channel: 'letter', reference: sent.reference };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'letter_rejected') return refused('letter_rejected', err.message.slice(0, 1000));
    throw err;
  }
}
