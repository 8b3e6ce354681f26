/**
 * What the service asks of a mail transport, independent of how mail leaves the machine (SMTP relay in production,
 * .eml files on a developer's machine). Workflows send through `Mailer`; activities/mail/ implements it.
 *
 * A send runs inside a durable step that may run again after a crash, so the caller chooses the Message-ID: a retried
 * send carries the same one, and the receiving side (and the file mailer) can recognise the repeat.
 */

export interface MailAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

export interface OutgoingMail {
  /** Display name and envelope/From address; the name is the organisation's, the address the service's own. */
  from: { name: string; address: string };
  /** Where replies go (the organisation's e-mail); null leaves Reply-To out. */
  replyTo: string | null;
  to: string;
  subject: string;
  html: string;
  text: string;
  attachments: MailAttachment[];
  /** Without angle brackets, e.g. `0192f1c2-….invoice.1@faktura.example`; see `mailMessageId`. */
  messageId: string;
  headers?: Record<string, string>;
}

export interface MailReceipt {
  /** The Message-ID the mail went out with, as given in `OutgoingMail.messageId`. */
  messageId: string;
  /** The server (or the file store) took the recipient and the message. */
  accepted: boolean;
  /** The server's last reply, with addresses reduced to their domain (it is recorded, so no personal data). */
  response: string;
  /** Where the file mailer wrote the message. */
  storedAt?: string;
}

export interface Mailer {
  /** Resolves once the message was handed over; rejects with `MailDeliveryError` only. */
  send(msg: OutgoingMail): Promise<MailReceipt>;
}

/**
 * Why a send failed, and whether trying again can help. Permanent: the server refused this recipient or this message
 * for good (an SMTP 5xx reply), so the failure is recorded and not retried. Transient: a 4xx reply, or the server could
 * not be reached, timed out, or refused our configuration (credentials, TLS); the same message may go through later.
 */
export class MailDeliveryError extends Error {
  readonly permanent: boolean;
  /** The SMTP reply code, when the failure was a reply. */
  readonly smtpCode: number | undefined;
  /** The transport's error code (`EENVELOPE`, `ESOCKET`, `ETIMEDOUT`, …), for logs and the timeline. */
  readonly code: string | undefined;

  constructor(message: string, opts: { permanent: boolean; smtpCode?: number | undefined; code?: string | undefined; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'MailDeliveryError';
    this.permanent = opts.permanent;
    this.smtpCode = opts.smtpCode;
    this.code = opts.code;
  }
}

/**
 * A Message-ID for one mail of one object and step (`${invoiceId}.invoice.1`), in the sending domain so it is unique
 * beyond this service. The same inputs give the same id, which is what makes a retried send recognisable.
 */
export function mailMessageId(key: string, fromAddress: string): string {
  const at = fromAddress.lastIndexOf('@');
  if (at < 1 || at === fromAddress.length - 1) throw new Error('the sender address has no domain');
  if (!/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/.test(key)) throw new Error(`"${key}" cannot be the left part of a Message-ID`);
  return `${key}@${fromAddress.slice(at + 1)}`;
}

/** Same shape as the workflows' JSON log line, so the endpoint's logger can be passed as it is. */
export type MailLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** `ida@kunde.dk` → `…@kunde.dk`: the domain stays for diagnosis, the person does not reach logs or records. */
export function redactAddresses(text: string): string {
  return text.replace(/[^\s<>"'(),;:[\]]+@([A-Za-z0-9.-]+)/g, '…@$1');
}

/** The part of an address that may be logged. */
export function addressDomain(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).toLowerCase();
}
