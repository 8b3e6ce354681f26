import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalLetterService } from '../../activities/letters/local-letters.ts';
import { composeReminderMail } from '../../activities/mail/reminder-mail.ts';
import { createSmtpMailer } from '../../activities/mail/smtp-mailer.ts';
import { deliverReminder, markReminderUndeliverable, recordReminderDelivery, type ReminderDeliveryDeps } from '../../activities/reminders/deliver-reminder.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { MailDeliveryError } from '../../services/mail/mail-port.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { loadReminderView } from '../../services/reminders/reminder-document.ts';
import { renderReminderDocument } from '../../services/reminders/render-reminder.ts';
import { createTestOrg, startTestApp, testDb, testRenderer, type TestApp, type TestOrg } from '../helpers/context.ts';
import { header, onlyLeaf, parseMime } from '../helpers/mime.ts';
import { smtpReply, startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { insertReminder, issueInvoice, type IssuedInvoice } from '../helpers/reminders.ts';

/**
 * The reminder mail against a real SMTP server on loopback (as the mailer tests), and the delivery steps around it:
 * deliver, record, and their idempotency; a permanent refusal, a transient failure and exhausted retries; a letter.
 */

const FROM = 'no-reply@faktura.invalid';

describe('reminder mail and delivery', () => {
  let t: TestApp;
  let org: TestOrg;
  const documents = createPostgresDocumentStore();
  let letterDir: string;

  const deps = (sink: SmtpSink | undefined): ReminderDeliveryDeps => ({
    ...testDb(),
    documents,
    mailer: sink ? createSmtpMailer(sink.url, () => {}) : { send: () => Promise.reject(new Error('no mail in this test')) },
    letters: createLocalLetterService(letterDir, () => {}),
    fromAddress: FROM,
  });

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Hansen, Jensen & Søn ApS', email: 'bogholderi@hansen.dk', bankReg: '1234', bankAccount: '0012345678' });
    letterDir = mkdtempSync(join(tmpdir(), 'faktura-test-letters-'));
  });
  after(() => t.close());

  async function rendered(inv: IssuedInvoice, row: Parameters<typeof insertReminder>[2]): Promise<string> {
    const id = await insertReminder(org, inv, row);
    assert.deepEqual(await renderReminderDocument({ ...testDb(), pdf: testRenderer(), documents }, id), { status: 'rendered' });
    return id;
  }

  /** The reminder events of the reminder's invoice, in order: type, the envelope's block and data. */
  const reminderEvents = async (inv: IssuedInvoice) =>
    (await testDb().db.sql<{ type: string; entity_family: string; entity_id: string; data: Record<string, unknown> }[]>`
      SELECT type, entity_family, entity_id, data FROM events WHERE entity_id = ${inv.invoiceId} AND type LIKE 'reminder.%' ORDER BY sekvensnummer`).map((e) => ({ ...e }));
  const eventData = (inv: IssuedInvoice, id: string, extra: Record<string, unknown> = {}) => ({
    reminderId: id,
    invoiceId: inv.invoiceId,
    customerId: inv.customerId,
    type: 'reminder',
    reminderNumber: 1,
    feeOere: 0,
    interestOere: 0,
    compensationOere: 0,
    demandLetter: false,
    channel: 'email',
    deadline: '2025-12-18',
    ...extra,
  });

  const row = async (id: string) =>
    (await testDb().db.sql<{ status: string; failure_code: string | null; delivery: string; message_id: string | null; delivered_at: Date | null; delivery_error: string | null; document_sha256: Buffer }[]>`
      SELECT status, failure_code, delivery, message_id, delivered_at, delivery_error, document_sha256 FROM reminders WHERE id = ${id}`)[0]!;

  it('mails the reminder: subject, From, Reply-To, To, Message-ID and the stored PDF; recorded once, a second deliver is settled', async () => {
    const inv = await issueInvoice(t, org, { type: 'person', name: 'Ida Jensen', email: 'ida@kunde.dk' }, 50_000);
    const id = await rendered(inv, { reminderNumber: 1, feeOere: 10_000, sentOn: '2025-12-08', deadline: '2025-12-18' });
    const sink = await startSmtpSink();
    try {
      const attempt = await deliverReminder(deps(sink), id);
      assert.equal(attempt.kind, 'sent');
      assert.equal(sink.received.length, 1);
      const msg = parseMime(sink.received[0]!);
      assert.equal(header(msg, 'Subject'), `Rykker nr. 1 for faktura nr. ${inv.number}`);
      // Non-ASCII travels as an encoded word; decoded, the display name is exactly the organisation's.
      assert.equal(header(msg, 'From'), `Hansen, Jensen & Søn ApS <${FROM}>`);
      assert.equal(header(msg, 'Reply-To'), 'bogholderi@hansen.dk');
      assert.equal(header(msg, 'To'), 'ida@kunde.dk');
      assert.equal(header(msg, 'Message-ID'), `<reminder-${id}@faktura.invalid>`);
      const attachment = onlyLeaf(msg, 'application/pdf');
      assert.match(header(attachment, 'Content-Disposition') ?? '', new RegExp(`filename="?rykker-1-faktura-${inv.number}\\.pdf"?`));
      const stored = await documents.get(testDb().db.sql, org.organizationId, (await row(id)).document_sha256);
      assert.ok(attachment.body.equals(stored!.bytes), 'the attachment is not the stored PDF');
      const text = onlyLeaf(msg, 'text/plain').body.toString('utf8');
      assert.match(text, /I alt at betale: 600,00 kr\./);
      assert.match(text, /Betales senest: 18-12-2025/);
      assert.match(text, /reg\.nr\. 1234, kontonr\. 0012345678/);

      assert.deepEqual(await recordReminderDelivery(deps(sink), id, attempt), { delivery: 'done' });
      const done = await row(id);
      assert.equal(done.status, 'sent');
      assert.equal(done.message_id, `reminder-${id}@faktura.invalid`);
      assert.ok(done.delivered_at instanceof Date);

      // Recording again changes nothing; delivering again finds it settled and mails nothing.
      assert.deepEqual(await recordReminderDelivery(deps(sink), id, attempt), { delivery: 'done' });
      assert.deepEqual((await row(id)).delivered_at, done.delivered_at);
      assert.deepEqual(await deliverReminder(deps(sink), id), { kind: 'settled', delivery: 'done' });
      assert.equal(sink.received.length, 1);
      assert.deepEqual(await markReminderUndeliverable(deps(sink), id, 'late'), { delivery: 'done' });
      assert.equal((await row(id)).status, 'sent');
      // reminder.sent once, in the invoice's block, however often the record step ran.
      assert.deepEqual(await reminderEvents(inv), [
        { type: 'reminder.sent', entity_family: 'invoice', entity_id: inv.invoiceId, data: eventData(inv, id, { feeOere: 10_000 }) },
      ]);
    } finally {
      await sink.close();
    }
  });

  it('a recipient refused with 550 makes the reminder failed (mail_rejected), once', async () => {
    const inv = await issueInvoice(t, org, { type: 'person', name: 'Ole', email: 'ole@kunde.dk' }, 50_000);
    const id = await rendered(inv, { reminderNumber: 1, sentOn: '2025-12-08', deadline: '2025-12-18' });
    const sink = await startSmtpSink({ onRcptTo: (a, _s, cb) => cb(smtpReply(550, `5.1.1 <${a.address}>: Recipient address rejected`)) });
    try {
      const attempt = await deliverReminder(deps(sink), id);
      assert.equal(attempt.kind, 'refused');
      assert.equal(attempt.kind === 'refused' && attempt.code, 'mail_rejected');
      assert.deepEqual(await recordReminderDelivery(deps(sink), id, attempt), { delivery: 'none' });
      const failed = await row(id);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.failure_code, 'mail_rejected');
      assert.match(failed.delivery_error ?? '', /550/);
      assert.ok(!(failed.delivery_error ?? '').includes('ole@'), 'the address reached the record');
      assert.deepEqual(await deliverReminder(deps(sink), id), { kind: 'settled', delivery: 'none' });
      assert.deepEqual(await recordReminderDelivery(deps(sink), id, attempt), { delivery: 'none' });
      assert.deepEqual(await reminderEvents(inv), [
        { type: 'reminder.failed', entity_family: 'invoice', entity_id: inv.invoiceId, data: eventData(inv, id, { failureCode: 'mail_rejected' }) },
      ]);
    } finally {
      await sink.close();
    }
  });

  it('a transient failure is thrown for a retry and leaves the reminder pending; when retries run out it is mail_undeliverable', async () => {
    const inv = await issueInvoice(t, org, { type: 'person', name: 'Eva', email: 'eva@kunde.dk' }, 50_000);
    const id = await rendered(inv, { reminderNumber: 1, sentOn: '2025-12-08', deadline: '2025-12-18' });
    const sink = await startSmtpSink({ onRcptTo: (_a, _s, cb) => cb(smtpReply(451, '4.7.1 try again later')) });
    try {
      await assert.rejects(deliverReminder(deps(sink), id), (err) => err instanceof MailDeliveryError && !err.permanent);
      assert.equal((await row(id)).delivery, 'pending');
    } finally {
      await sink.close();
    }
    assert.deepEqual(await markReminderUndeliverable(deps(undefined), id, '451 4.7.1 try again later'), { delivery: 'none' });
    const r = await row(id);
    assert.deepEqual([r.status, r.failure_code, r.delivery_error], ['failed', 'mail_undeliverable', '451 4.7.1 try again later']);
    assert.deepEqual(await markReminderUndeliverable(deps(undefined), id, 'again'), { delivery: 'none' });
    assert.deepEqual(await reminderEvents(inv), [
      { type: 'reminder.failed', entity_family: 'invoice', entity_id: inv.invoiceId, data: eventData(inv, id, { failureCode: 'mail_undeliverable' }) },
    ]);
  });

  it('needs the document first; a customer without e-mail now is refused (customer_email_missing)', async () => {
    const inv = await issueInvoice(t, org, { type: 'person', name: 'Bo' }, 50_000);
    const id = await insertReminder(org, inv, { reminderNumber: 1, sentOn: '2025-12-08', deadline: '2025-12-18' });
    await assert.rejects(deliverReminder(deps(undefined), id), /has no document yet/);
    assert.deepEqual(await renderReminderDocument({ ...testDb(), pdf: testRenderer(), documents }, id), { status: 'rendered' });
    const attempt = await deliverReminder(deps(undefined), id);
    assert.deepEqual(attempt, { kind: 'refused', code: 'customer_email_missing', reason: 'the customer has no e-mail address' });
    assert.deepEqual(await deliverReminder(deps(undefined), '0190a0a0-0000-7000-8000-000000000000'), { kind: 'settled', delivery: 'unknown' });
  });

  it('delivers a letter-channel reminder through the letter service, once, and records its reference', async () => {
    const inv = await issueInvoice(t, org, { type: 'person', name: 'Karen Post', address: { street: 'Posthusvej 3', postalCode: '7100', city: 'Vejle' } }, 50_000);
    const id = await rendered(inv, { reminderNumber: 1, channel: 'letter', sentOn: '2025-12-08', deadline: '2025-12-18' });
    const attempt = await deliverReminder(deps(undefined), id);
    assert.deepEqual(attempt, { kind: 'sent', channel: 'letter', reference: id });
    assert.deepEqual(await recordReminderDelivery(deps(undefined), id, attempt), { delivery: 'done' });
    assert.equal((await row(id)).message_id, id);
    assert.deepEqual((await reminderEvents(inv)).map((e) => [e.type, e.data.channel]), [['reminder.sent', 'letter']]);
    assert.deepEqual(readdirSync(letterDir).filter((n) => n.startsWith(id)).sort(), [`${id}.json`, `${id}.pdf`]);
    assert.deepEqual(await deliverReminder(deps(undefined), id), { kind: 'settled', delivery: 'done' });
  });

  it('a letter the provider refuses for good makes the reminder failed (letter_rejected); a missing address is refused before', async () => {
    const inv = await issueInvoice(t, org, { type: 'person', name: 'Kim', address: { street: 'Nowhere 1', postalCode: '0000', city: 'X' } }, 50_000);
    const id = await rendered(inv, { reminderNumber: 1, channel: 'letter', sentOn: '2025-12-08', deadline: '2025-12-18' });
    const refusing = { ...deps(undefined), letters: { send: () => Promise.reject(new DomainError('letter_rejected', 'the letter service refused the letter: 422 bad address')) } };
    const attempt = await deliverReminder(refusing, id);
    assert.deepEqual(attempt, { kind: 'refused', code: 'letter_rejected', reason: 'the letter service refused the letter: 422 bad address' });
    await recordReminderDelivery(refusing, id, attempt);
    const r = await row(id);
    assert.deepEqual([r.status, r.failure_code, r.delivery], ['failed', 'letter_rejected', 'none']);

    const noAddress = await issueInvoice(t, org, { type: 'person', name: 'Uden Adresse' }, 50_000);
    const id2 = await rendered(noAddress, { reminderNumber: 1, channel: 'letter', sentOn: '2025-12-08', deadline: '2025-12-18' });
    assert.equal((await deliverReminder(deps(undefined), id2)).kind, 'refused');
    // A letter whose retries ran out is letter_undeliverable.
    assert.deepEqual(await markReminderUndeliverable(deps(undefined), id2, 'provider down'), { delivery: 'none' });
    assert.equal((await row(id2)).failure_code, 'letter_undeliverable');
    assert.deepEqual((await reminderEvents(inv)).map((e) => [e.type, e.data.failureCode]), [['reminder.failed', 'letter_rejected']]);
    assert.deepEqual((await reminderEvents(noAddress)).map((e) => [e.type, e.data.channel, e.data.failureCode]), [['reminder.failed', 'letter', 'letter_undeliverable']]);
  });

  it('subjects and attachments of the payment reminder and the demand letter, in Danish and English', async () => {
    const inv = await issueInvoice(t, org, { type: 'person', name: 'John Smith', email: 'john@kunde.dk', language: 'en' }, 50_000);
    const pr = await insertReminder(org, inv, { type: 'payment_reminder', sentOn: '2025-12-04', deadline: '2025-12-14' });
    const r3 = await insertReminder(org, inv, { reminderNumber: 3, demandLetter: true, feeOere: 10_000, sentOn: '2025-12-28', deadline: '2026-01-07' });
    const view = async (id: string) => (await loadReminderView(testDb().db.sql, testDb().keyring, org.organizationId, id))!;
    const pdf = Buffer.from('%PDF-1.7\n%%EOF\n');
    const n = inv.number;

    const en = composeReminderMail({ view: await view(r3), fromAddress: FROM, to: 'john@kunde.dk', pdf });
    assert.equal(en.subject, `Demand for payment: reminder no. 3 for invoice no. ${n}`);
    assert.equal(en.attachments[0]!.filename, `demand-for-payment-reminder-3-invoice-${n}.pdf`);
    assert.equal(en.messageId, `reminder-${r3}@faktura.invalid`);
    assert.match(en.text, /handed over to debt collection/);
    assert.equal(composeReminderMail({ view: await view(pr), fromAddress: FROM, to: 'x@y.dk', pdf }).subject, `Payment reminder for invoice no. ${n}`);

    const da = composeReminderMail({ view: { ...(await view(r3)), language: 'da' }, fromAddress: FROM, to: 'john@kunde.dk', pdf });
    assert.equal(da.subject, `Påkrav: rykker nr. 3 for faktura nr. ${n}`);
    assert.match(da.text, /overdrages kravet til inkasso/);
    const daPr = composeReminderMail({ view: { ...(await view(pr)), language: 'da' }, fromAddress: FROM, to: 'x@y.dk', pdf });
    assert.equal(daPr.subject, `Betalingspåmindelse for faktura nr. ${n}`);
    assert.doesNotMatch(daPr.text, /inkasso/);
    assert.equal(daPr.replyTo, 'bogholderi@hansen.dk');
  });
});
