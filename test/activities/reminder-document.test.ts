import assert from 'node:assert/strict';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { loadReminderView } from '../../services/reminders/reminder-document.ts';
import { renderReminderDocument } from '../../services/reminders/render-reminder.ts';
import { call, createTestOrg, startTestApp, testDb, testRenderer, type TestApp, type TestOrg } from '../helpers/context.ts';
import { pdfText } from '../helpers/pdf-text.ts';
import { composeReminderMail } from '../../activities/mail/reminder-mail.ts';
import { fikPaymentId } from '../../services/payments/fik-payment-id.ts';
import { insertReminder, issueInvoice, type IssuedInvoice } from '../helpers/reminders.ts';

/**
 * Reminder documents through the real Chromium renderer, read back with pdftotext: a rykker and a demand letter
 * (påkrav) in Danish and English, amounts as of the reminder (principal after a part payment, fees before it, its own
 * fee), the new deadline, bank details and payment link, and the påkrav warning only on the demand letter.
 */
describe('reminder documents', () => {
  const BASE = 'https://betal.example.dk';
  let t: TestApp;
  let org: TestOrg;
  const documents = createPostgresDocumentStore();
  const deps = () => ({ ...testDb(), pdf: testRenderer(), documents, payBaseUrl: BASE });

  before(async () => {
    t = await startTestApp({ payBaseUrl: BASE });
    org = await createTestOrg({ name: 'Bager Hansen ApS', email: 'regnskab@bagerhansen.dk', bankReg: '1234', bankAccount: '0012345678' });
  });
  after(() => t.close());

  /** An invoice of 1.000,00 kr. with 250,00 kr. paid and a payment link, plus reminders 1 and 2 with a fee each. */
  async function invoiceWithTwoReminders(language: 'da' | 'en'): Promise<{ inv: IssuedInvoice; r1: string; r2: string; code: string; url: string }> {
    const inv = await issueInvoice(t, org, {
      type: 'person', name: language === 'da' ? 'Ida Jensen' : 'John Smith', email: 'kunde@kunde.dk', language,
      address: { street: 'Vestergade 2', postalCode: '5000', city: 'Odense C' },
    }, 100_000);
    const paid = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/payments`, { key: org.apiKey, body: { amountOere: 25_000, paymentDate: '2025-12-03' } });
    assert.equal(paid.status, 201, paid.raw);
    const link = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/payment-link`, { key: org.apiKey });
    assert.equal(link.status, 200, link.raw);
    const r1 = await insertReminder(org, inv, { reminderNumber: 1, feeOere: 10_000, sentOn: '2025-12-08', deadline: '2025-12-18' });
    const r2 = await insertReminder(org, inv, { reminderNumber: 2, feeOere: 10_000, sentOn: '2025-12-18', deadline: '2025-12-28' });
    return { inv, r1, r2, code: link.body.data.paymentCode, url: link.body.data.url };
  }

  async function renderedText(reminderId: string): Promise<string> {
    assert.deepEqual(await renderReminderDocument(deps(), reminderId), { status: 'rendered' });
    const [row] = await testDb().db.sql<{ document_sha256: Buffer | null }[]>`SELECT document_sha256 FROM reminders WHERE id = ${reminderId}`;
    const doc = await documents.get(testDb().db.sql, org.organizationId, row!.document_sha256!);
    assert.equal(doc!.contentType, 'application/pdf');
    return (await pdfText(doc!.bytes)).replace(/\s+/g, ' ');
  }

  it('a Danish rykker: heading, invoice, due date, principal, fees so far, this fee, total, deadline, bank and link; no påkrav', async () => {
    const { inv, r2, code, url } = await invoiceWithTwoReminders('da');
    const text = await renderedText(r2);
    assert.match(text, /Rykker nr\. 2/);
    assert.match(text, /Bager Hansen ApS/);
    assert.match(text, /CVR-nr\. 12345678/);
    assert.match(text, /regnskab@bagerhansen\.dk/);
    assert.match(text, /Ida Jensen/);
    assert.match(text, /Vestergade 2/);
    assert.match(text, new RegExp(`Fakturanr\\. ${inv.number}\\b`));
    assert.match(text, /Fakturadato 17-11-2025/);
    assert.match(text, /Oprindelig forfaldsdato 01-12-2025/);
    assert.match(text, /Ny betalingsfrist 28-12-2025/);
    assert.match(text, /Resterende fakturabeløb 750,00 kr\./);
    assert.match(text, /Rykkergebyrer tidligere opkrævet 100,00 kr\./);
    assert.match(text, /Rykkergebyr for denne rykker 100,00 kr\./);
    assert.match(text, /I alt at betale 950,00 kr\./);
    assert.match(text, /Betales senest 28-12-2025/);
    assert.match(text, /Reg\.nr\. 1234/);
    assert.match(text, /Kontonr\. 0012345678/);
    assert.match(text, new RegExp(`Betalingskode ${code}`));
    assert.ok(text.includes(url), `the payment link ${url} is missing from: ${text}`);
    assert.match(text, /rentelovens § 9 b/);
    assert.doesNotMatch(text, /Påkrav|inkasso/i);

    const [row] = await testDb().db.sql<{ language: string; delivery: string }[]>`SELECT language, delivery FROM reminders WHERE id = ${r2}`;
    assert.deepEqual({ ...row }, { language: 'da', delivery: 'pending' });
  });

  it('a Danish påkrav says so, with its number, the fees before it and the collection warning with its deadline', async () => {
    const { inv } = await invoiceWithTwoReminders('da');
    const r3 = await insertReminder(org, inv, { reminderNumber: 3, feeOere: 10_000, demandLetter: true, sentOn: '2025-12-28', deadline: '2026-01-07' });
    const text = await renderedText(r3);
    assert.match(text, /Påkrav/);
    assert.match(text, /Rykker nr\. 3 — påkrav efter inkassolovens § 10/);
    // Dates in running text never break at their hyphens.
    assert.match(text, /som forfaldt til betaling 01-12-2025\. Dette brev er et påkrav, jf\. inkassolovens § 10\./);
    assert.match(text, /Resterende fakturabeløb 750,00 kr\./);
    assert.match(text, /Rykkergebyrer tidligere opkrævet 200,00 kr\./);
    assert.match(text, /Rykkergebyr for denne rykker 100,00 kr\./);
    assert.match(text, /I alt at betale 1\.050,00 kr\./);
    assert.match(text, /Ny betalingsfrist 07-01-2026/);
    assert.match(text, /Er det samlede beløb ikke betalt senest 07-01-2026, overdrager vi kravet til inkasso/);
    assert.match(text, /inkassogebyr på 100,00 kr\. efter rentelovens § 9 b, stk\. 3/);
  });

  it('an English reminder and demand letter, in the customer language', async () => {
    const { inv, r2 } = await invoiceWithTwoReminders('en');
    const reminder = await renderedText(r2);
    assert.match(reminder, /Reminder no\. 2/);
    assert.match(reminder, new RegExp(`Invoice no\\. ${inv.number}\\b`));
    assert.match(reminder, /Invoice date 2025-11-17/);
    assert.match(reminder, /Original due date 2025-12-01/);
    assert.match(reminder, /Invoice amount outstanding DKK 750\.00/);
    assert.match(reminder, /Reminder fees charged before DKK 100\.00/);
    assert.match(reminder, /Fee for this reminder DKK 100\.00/);
    assert.match(reminder, /Total to pay DKK 950\.00/);
    assert.match(reminder, /New payment deadline 2025-12-28/);
    assert.match(reminder, /Reg\. no\. 1234/);
    assert.match(reminder, /Account no\. 0012345678/);
    assert.doesNotMatch(reminder, /Demand for payment|debt collection/i);

    const r3 = await insertReminder(org, inv, { reminderNumber: 3, feeOere: 10_000, demandLetter: true, sentOn: '2025-12-28', deadline: '2026-01-07' });
    const demand = await renderedText(r3);
    assert.match(demand, /Demand for payment/);
    assert.match(demand, /Reminder no\. 3 — demand under section 10 of the/);
    assert.match(demand, /Total to pay DKK 1,050\.00/);
    assert.match(demand, /If the total amount is not paid by 2026-01-07, the claim will be handed over to debt collection/);
    assert.match(demand, /collection fee of DKK 100\.00 under section 9 b\(3\)/);
    const [row] = await testDb().db.sql<{ language: string }[]>`SELECT language FROM reminders WHERE id = ${r3}`;
    assert.equal(row!.language, 'en');
  });

  it('the free payment reminder, without a link; a failed reminder gets its document too; a second render finds it', async () => {
    const inv = await issueInvoice(t, org, { type: 'company', name: 'Kunde A/S', cvr: '87654321' }, 12_345_678);
    // As an invoice issued before the issue made its link: the reminder prints none.
    await testDb().db.sql`DELETE FROM payment_links WHERE invoice_id = ${inv.invoiceId}`;
    const pr = await insertReminder(org, inv, { type: 'payment_reminder', sentOn: '2025-12-04', deadline: '2025-12-14' });
    const text = await renderedText(pr);
    assert.match(text, /Betalingspåmindelse/);
    assert.match(text, /Resterende fakturabeløb 123\.456,78 kr\./);
    assert.match(text, /Gebyr for denne påmindelse 0,00 kr\./);
    assert.match(text, /I alt at betale 123\.456,78 kr\./);
    assert.doesNotMatch(text, /Betalingskode|Betal online|Påkrav|rentelovens/);

    const failed = await insertReminder(org, inv, { reminderNumber: 1, failureCode: 'customer_email_missing', sentOn: '2025-12-08', deadline: '2025-12-18' });
    const failedText = await renderedText(failed);
    assert.match(failedText, /Rykker nr\. 1/);
    const [before] = await testDb().db.sql<{ document_sha256: Buffer }[]>`SELECT document_sha256 FROM reminders WHERE id = ${failed}`;
    assert.deepEqual(await renderReminderDocument(deps(), failed), { status: 'exists' });
    const [after] = await testDb().db.sql<{ document_sha256: Buffer }[]>`SELECT document_sha256 FROM reminders WHERE id = ${failed}`;
    assert.ok(after!.document_sha256.equals(before!.document_sha256));
  });

  it("repeats the invoice's FI-kort +71 line in the PDF and the mail; an invoice without a payment id has none", async () => {
    const fikOrg = await createTestOrg({ name: 'Bager Hansen ApS', bankReg: '1234', bankAccount: '0012345678', fiCreditorNumber: '85799665' });
    const inv = await issueInvoice(t, fikOrg, { type: 'company', name: 'Kunde A/S', email: 'bogholderi@kunde.dk' }, 50_000);
    const line = `+71<${fikPaymentId(inv.number)}+85799665<`;
    const r1 = await insertReminder(fikOrg, inv, { reminderNumber: 1, feeOere: 10_000, sentOn: '2025-12-08', deadline: '2025-12-18' });
    assert.deepEqual(await renderReminderDocument(deps(), r1), { status: 'rendered' });
    const [row] = await testDb().db.sql<{ document_sha256: Buffer }[]>`SELECT document_sha256 FROM reminders WHERE id = ${r1}`;
    const doc = await documents.get(testDb().db.sql, fikOrg.organizationId, row!.document_sha256);
    const text = (await pdfText(doc!.bytes)).replace(/\s+/g, ' ');
    assert.ok(text.includes(`Betalingsreference ${inv.number} FI-kort ${line}`), text);
    const view = await loadReminderView(testDb().db.sql, testDb().keyring, fikOrg.organizationId, r1, { payBaseUrl: BASE });
    assert.ok(view);
    assert.equal(view.fik?.line, line);
    const mail = composeReminderMail({ view, fromAddress: 'faktura@faktura.invalid', to: 'bogholderi@kunde.dk', pdf: doc!.bytes });
    assert.ok(mail.text.includes(`Betal med FI-kort: ${line}`), mail.text);
    assert.ok(mail.html.includes(`Betal med FI-kort: ${line.replaceAll('<', '&lt;')}`), mail.html);

    const plain = await loadReminderView(testDb().db.sql, testDb().keyring, org.organizationId, (await invoiceWithTwoReminders('da')).r1);
    assert.ok(plain);
    assert.equal(plain.fik, null);
    assert.ok(!composeReminderMail({ view: plain, fromAddress: 'faktura@faktura.invalid', to: 'x@kunde.dk', pdf: doc!.bytes }).text.includes('FI-kort'));
  });

  it('renders a reminder once when two renders race; unknown ids and other organisations find nothing', async () => {
    const { r1 } = await invoiceWithTwoReminders('da');
    const results = await Promise.all([renderReminderDocument(deps(), r1), renderReminderDocument(deps(), r1)]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['exists', 'rendered']);
    assert.deepEqual(await renderReminderDocument(deps(), '0190a0a0-0000-7000-8000-000000000000'), { status: 'unknown' });
    assert.deepEqual(await renderReminderDocument(deps(), 'not-a-uuid'), { status: 'unknown' });
    const other = await createTestOrg();
    assert.equal(await loadReminderView(testDb().db.sql, testDb().keyring, other.organizationId, r1), undefined);
  });

  it('the view: amounts as of the reminder (later fees are not counted), the link URL only with the pay page address', async () => {
    const { r1, code } = await invoiceWithTwoReminders('da');
    const view = await loadReminderView(testDb().db.sql, testDb().keyring, org.organizationId, r1);
    assert.ok(view);
    assert.equal(view.kind, 'reminder');
    assert.equal(view.principalOere, 75_000);
    assert.equal(view.feesBeforeOere, 0);
    assert.equal(view.feeOere, 10_000);
    assert.equal(view.totalOere, 85_000);
    assert.deepEqual(view.paymentLink, { url: null, paymentCode: code });
  });
});
