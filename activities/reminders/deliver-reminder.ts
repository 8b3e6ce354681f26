/**
 * A reminder's delivery, after the step that took it has committed and its document is stored
 * (services/reminders/render-reminder.ts): by mail with the PDF attached, or as a letter through the letter service.
 *
 * Two steps, like the invoice mail (activities/invoices/deliver-invoice-mail.ts): `deliverReminder` hands the reminder
 * over and writes nothing; `recordReminderDelivery` records what it did from its journaled result, guarded by
 * `delivery = 'pending'`, so a crash between them never sends twice and recording twice changes nothing. What is
 * retried and what is final:
 *
 * - a transient failure is thrown (services/dispatch/channels.ts): the step retries it under its policy, and when
 *   the retries run out the workflow calls `markReminderUndeliverable`;
 * - a refusal for good (`mail_rejected`, `letter_rejected`), or a customer who since lost the e-mail or address the
 *   channel needs (`customer_email_missing`, `customer_address_missing`), is recorded as a failed reminder.
 *
 * The invoice's timeline gets nothing here: the engine wrote the `reminder` entry when it took the step.
 */
import { loadBuyer, type BuyerSnapshot } from '../../services/invoices/document-parties.ts';
import { REMINDER_DELIVERY, settleReminderDelivery } from '../../services/dispatch/delivery-lifecycle.ts';
import { REMINDER_LIFECYCLE } from '../../services/reminders/reminder-lifecycle.ts';
import { lockReminderInvoice, recordReminderEvent } from '../../services/reminders/record-reminder-event.ts';
import { loadReminderView, type ReminderDocumentView } from '../../services/reminders/reminder-document.ts';
import { isUuid } from '../../services/shared/ids.ts';
import { documentLetter, postalRecipient, refused, sentReference, type ChannelOutcome, type DeliveryDeps } from '../../services/dispatch/channels.ts';
import { deliverDocument, type DocumentKind } from '../../services/dispatch/deliver-document.ts';
import type { DeliveryRecord } from '../../services/dispatch/record-delivery.ts';
import { storedDocument } from '../../services/dispatch/stored-document.ts';
import { composeReminderMail } from '../mail/reminder-mail.ts';

export interface ReminderDeliveryDeps extends DeliveryDeps {
  /** The pay page's address (PAY_BASE_URL), for the payment link in the mail; without it only the code shows. */
  payBaseUrl?: string;
}

/** What one delivery step did; Restate journals it, so recording it again after a crash never sends again. */
export type ReminderDeliveryAttempt =
  /** Nothing to do: the delivery was recorded already (`done`, `none`), or there is no such reminder (`unknown`). */
  | { kind: 'settled'; delivery: 'done' | 'none' | 'unknown' }
  | ChannelOutcome;

interface PendingReminder {
  organization_id: string;
  customer_id: string;
  channel: 'email' | 'letter' | null;
  delivery: 'pending' | 'done' | 'none';
  document_sha256: Buffer | null;
  language: 'da' | 'en' | null;
}

type ReadyReminder = { r: PendingReminder; view: ReminderDocumentView; pdf: Buffer; buyer: BuyerSnapshot };

/** The reminder as a kind of outbound document: by the channel the engine chose when it took the step. */
export const REMINDER_DOCUMENT: DocumentKind<ReminderDeliveryDeps, ReadyReminder, ReminderDeliveryAttempt> = {
  async prepare(deps, reminderId) {
    if (!isUuid(reminderId)) return { settled: { kind: 'settled', delivery: 'unknown' } };
    return deps.db.read(async (sql) => {
      const [r] = await sql<PendingReminder[]>`
        SELECT organization_id, customer_id, channel, delivery, document_sha256, language FROM reminders WHERE id = ${reminderId}`;
      if (!r) return { settled: { kind: 'settled', delivery: 'unknown' } };
      if (r.delivery !== REMINDER_DELIVERY.state.pending) return { settled: { kind: 'settled', delivery: r.delivery } };
      if (!r.document_sha256) throw new Error(`reminder ${reminderId} has no document yet: it is rendered before it is delivered`);
      // A pending reminder always has a channel (the schema ties pending to sent); one without cannot be delivered.
      if (r.channel === null) throw new Error(`reminder ${reminderId} is pending without a channel`);
      const view = await loadReminderView(sql, deps.keyring, r.organization_id, reminderId, { payBaseUrl: deps.payBaseUrl });
      if (!view) throw new Error(`reminder ${reminderId} has no document view (its invoice is not an issued invoice)`);
      const pdf = await storedDocument(sql, deps.documents, r.organization_id, r.document_sha256, `reminder ${reminderId}`);
      const buyer = await loadBuyer(sql, deps.keyring, r.organization_id, r.customer_id);
      // The mail speaks the language the PDF was written in.
      return { ready: { r, view: { ...view, language: r.language ?? view.language }, pdf, buyer } };
    });
  },
  // Where the customer lives now (the engine checked this address when it chose the channel).
  recipient({ r, buyer }) {
    if (r.channel === 'email') return buyer.email ? { channel: 'email', name: buyer.name, email: buyer.email } : refused('customer_email_missing', 'the customer has no e-mail address');
    return postalRecipient(buyer.name, buyer) ?? refused('customer_address_missing', 'the customer has no street, postal code and city');
  },
  outbound: ({ r, view, pdf }, deps, reminderId) => ({
    mail: (to) => composeReminderMail({ view, fromAddress: deps.fromAddress, to: to.email, pdf }),
    letter: documentLetter({ id: reminderId, organizationId: r.organization_id, documentSha256: r.document_sha256!.toString('hex'), pdf }, view.seller),
  }),
  answer: (outcome) => outcome,
};

/**
 * Step 1: hands a pending reminder over, by its channel, with its stored PDF. Needs the document: a reminder without
 * one is an Error (the workflow renders first). Writes nothing.
 */
export const deliverReminder = (deps: ReminderDeliveryDeps, reminderId: string): Promise<ReminderDeliveryAttempt> => deliverDocument(REMINDER_DOCUMENT, deps, reminderId);

/**
 * A reminder whose delivery is given up fails with it, in the same guarded UPDATE: a pending delivery belongs to a
 * sent reminder (the schema ties them), which is the state the reminder's `fail` starts from.
 */
const FAILED = REMINDER_LIFECYCLE.transitions.fail.to;

/**
 * Step 2: records what step 1 did, in one transaction, guarded by `delivery = 'pending'` so that running it twice
 * changes nothing. Sent: delivery `done` with the Message-ID (or the letter's reference) and the time, and
 * `reminder.sent`. Refused: the reminder becomes `failed` with the refusal's code, delivery `none` and the reason, and
 * `reminder.failed`. The event is written only by the call that moved the delivery, under the invoice's row lock.
 * Answers the delivery as it is now.
 */
export async function recordReminderDelivery(deps: Pick<ReminderDeliveryDeps, 'db'>, reminderId: string, attempt: ReminderDeliveryAttempt): Promise<{ delivery: string }> {
  if (!isUuid(reminderId)) return { delivery: 'unknown' };
  return deps.db.tx(async (tx) => {
    if (attempt.kind === 'sent' || attempt.kind === 'refused') await lockReminderInvoice(tx, reminderId);
    if (attempt.kind === 'sent') {
      if (await settleReminderDelivery(tx, reminderId, 'deliver', tx`message_id = ${sentReference(attempt)}, delivered_at = now(), delivery_error = NULL`)) {
        await recordReminderEvent(tx, reminderId, 'sent');
      }
    } else if (attempt.kind === 'refused') {
      if (await settleReminderDelivery(tx, reminderId, 'giveUp', tx`status = ${FAILED}, failure_code = ${attempt.code}, delivery_error = ${attempt.reason.slice(0, 1000)}`)) {
        await recordReminderEvent(tx, reminderId, 'failed');
      }
    }
    const [now] = await tx<{ delivery: string }[]>`SELECT delivery FROM reminders WHERE id = ${reminderId}`;
    return { delivery: now?.delivery ?? 'unknown' };
  });
}

/**
 * The delivery step exhausted its retries: the reminder is recorded as failed (`mail_undeliverable`, or
 * `letter_undeliverable` for a letter) with the last error, delivery `none`, and `reminder.failed`. Idempotent like
 * the record step.
 */
export async function markReminderUndeliverable(deps: Pick<ReminderDeliveryDeps, 'db'>, reminderId: string, reason: string): Promise<{ delivery: string }> {
  if (!isUuid(reminderId)) return { delivery: 'unknown' };
  return deps.db.tx(async (tx) => {
    await lockReminderInvoice(tx, reminderId);
    const failureCode = tx`CASE WHEN channel = 'letter' THEN 'letter_undeliverable' ELSE 'mail_undeliverable' END`;
    if (await settleReminderDelivery(tx, reminderId, 'giveUp', tx`status = ${FAILED}, failure_code = ${failureCode}, delivery_error = ${reason.slice(0, 1000)}`)) {
      await recordReminderEvent(tx, reminderId, 'failed');
    }
    const [now] = await tx<{ delivery: string }[]>`SELECT delivery FROM reminders WHERE id = ${reminderId}`;
    return { delivery: now?.delivery ?? 'unknown' };
  });
}

/** How a reminder records its delivery (`recordDelivery('reminder', …)`): on the reminder's delivery and status. */
export const REMINDER_RECORD: DeliveryRecord<string, ReminderDeliveryAttempt, { delivery: string }> = {
  record: (db, reminderId, attempt) => recordReminderDelivery({ db }, reminderId, attempt),
  giveUp: (db, reminderId, reason) => markReminderUndeliverable({ db }, reminderId, reason),
};
