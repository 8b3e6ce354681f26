/**
 * What the service asks of a print-and-post service: one PDF, printed and posted to one address. The engine uses it
 * for reminders to customers without an e-mail address (reminder settings `letterFallback`); activities/letters/
 * implements it (files under DATA_DIR/letters on a developer's machine, a provider's HTTP API in production).
 *
 * A send runs inside a durable step that may run again after a crash, so the caller chooses the letter's id (a
 * reminder's id): an adapter that is handed the same id and document again reports the first letter, never posts a
 * second one.
 */

export interface LetterAddress {
  name: string;
  street: string;
  postalCode: string;
  city: string;
}

export interface Letter {
  /** The caller's id of this letter (for a reminder, the reminder's id): the idempotency key of the send. */
  id: string;
  organizationId: string;
  /** The SHA-256 (hex) of `pdf`, as the document store files it. */
  documentSha256: string;
  pdf: Buffer;
  recipient: LetterAddress & { country: string };
  /** The return address: the organisation. */
  sender: LetterAddress;
}

export interface LetterService {
  /**
   * Resolves once the letter was handed over, with the provider's reference (or the letter's id). A letter the
   * provider refuses for good rejects with DomainError `letter_rejected` (not retried); anything else that rejects
   * (the provider unreachable, a 5xx, a timeout) may go through when tried again.
   */
  send(letter: Letter): Promise<{ reference: string }>;
}

/** Same shape as the workflows' JSON log line (and MailLog), so the endpoint's logger can be passed as it is. */
export type LetterLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
