import assert from 'node:assert/strict';
import type { OutgoingMail } from '../../services/mail/mail-port.ts';
import { mailInvoice, type InvoiceMailDeps } from '../../activities/invoices/deliver-invoice-mail.ts';
import { fikPaymentId } from '../../services/payments/fik-payment-id.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';
import { pdfText } from '../helpers/pdf-text.ts';

const CREDITOR = '85799665';
const lines = [{ description: 'Rugbrød, 1 kg', quantity: 4, unitPriceOere: 3500 }];

/**
 * What an issued invoice tells its debtor about paying (docs/bank-payments.md): its PDF prints the bank details, the
 * payment link with its code (and QR code), and the FI-kort +71 line when the invoice has a payment id; the printed
 * link opens the invoice's pay page; the mail carries the same. Credit notes print none of it.
 */
describe('the payment details on the invoice PDF and mail', function () {
  this.timeout(120_000);
  let pay: TestPay;
  let t: TestApp;
  let fikOrg: TestOrg;
  let plainOrg: TestOrg;

  before(async () => {
    // The pay service on a real port, so that the link printed on the PDF is opened as a debtor opens it.
    pay = await startTestPay({ listen: true });
    t = await startTestApp({ payBaseUrl: pay.baseUrl });
    fikOrg = await createTestOrg({ name: 'Bager Hansen ApS', bankReg: '1234', bankAccount: '0001234567', fiCreditorNumber: CREDITOR });
    plainOrg = await createTestOrg({ name: 'Uden FI ApS', bankReg: '4321', bankAccount: '0007654321' });
  });
  after(async () => {
    await t.close();
    await pay.close();
  });

  const issue = async (org: TestOrg, customer: Record<string, unknown> = { type: 'company', name: 'Kunde A/S' }) => {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customer, lines } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data as { id: string; number: number; fik: { line: string; paymentId: string } | null };
  };
  const pdfOf = async (org: TestOrg, path: string) => {
    const res = await t.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${org.apiKey}` } });
    assert.equal(res.statusCode, 200, res.body);
    return (await pdfText(res.rawPayload)).replace(/\s+/g, ' ');
  };
  const linkOf = async (org: TestOrg, invoiceId: string) => {
    const res = await call(t.app, 'GET', `/v1/invoices/${invoiceId}/payment-link`, { key: org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body.data as { url: string; reference: string; paymentCode: string };
  };
  const linkRows = async (invoiceId: string) =>
    (await testDb().db.sql<{ reference: string }[]>`SELECT reference FROM payment_links WHERE invoice_id = ${invoiceId}`).map((r) => r.reference);

  it('an invoice issued under an FI creditor number prints its link, code and +71 line beside the bank details; the printed link opens its pay page @cluster', async () => {
    const inv = await issue(fikOrg);
    // The link is made by the issue, before anyone asks for it.
    const made = await linkRows(inv.id);
    assert.equal(made.length, 1);
    const text = await pdfOf(fikOrg, `/v1/invoices/${inv.id}/pdf`);
    const link = await linkOf(fikOrg, inv.id);
    assert.equal(link.reference, made[0]);
    assert.equal(link.url, `${pay.baseUrl}/p/${link.reference}`);
    const paymentId = fikPaymentId(inv.number);
    const line = `+71<${paymentId}+${CREDITOR}<`;
    assert.equal(inv.fik?.line, line);
    assert.match(text, /Reg\.nr\. 1234 Kontonr\. 0001234567/);
    assert.ok(text.includes(`FI-kort ${line}`), `the FI line ${line} is missing from: ${text}`);
    assert.ok(text.includes(`Betalingskode ${link.paymentCode}`), text);
    assert.ok(text.includes(`Betal online ${link.url}`), `the payment link ${link.url} is missing from: ${text}`);
    assert.match(text, /Scan og betal/);

    // Opened as the debtor opens it: the invoice's own pay page, with its number and amount.
    const page = await fetch(link.url);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.ok(html.includes(String(inv.number)), html);
    assert.match(html, /175,00/);
  });

  it('an invoice without a payment id prints the link and code, and no FI line', async () => {
    const inv = await issue(plainOrg);
    assert.equal(inv.fik, null);
    const text = await pdfOf(plainOrg, `/v1/invoices/${inv.id}/pdf`);
    const link = await linkOf(plainOrg, inv.id);
    assert.ok(text.includes(`Betal online ${link.url}`), text);
    assert.ok(text.includes(`Betalingskode ${link.paymentCode}`), text);
    assert.doesNotMatch(text, /FI-kort|\+71</);
  });

  it('a credit note prints no link, code, QR code or FI line', async () => {
    const inv = await issue(fikOrg);
    const note = await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: fikOrg.apiKey, body: { reason: 'Fejl' } });
    assert.equal(note.status, 201, note.raw);
    const text = await pdfOf(fikOrg, `/v1/creditnotes/${note.body.data.id}/pdf`);
    assert.match(text, /Kreditnota/);
    assert.doesNotMatch(text, /Betal online|Betalingskode|Scan og betal|FI-kort|\+71</);
    assert.deepEqual(await linkRows(note.body.data.id), []);
  });

  describe('the invoice mail', () => {
    const mailed: OutgoingMail[] = [];
    const deps = (): InvoiceMailDeps => {
      const { db, keyring } = testDb();
      return {
        db, keyring, documents: t.deps.documents, fromAddress: 'faktura@faktura.invalid', trackingPixelUrl: () => null, payBaseUrl: pay.baseUrl,
        mailer: { send: async (m) => (mailed.push(m), { messageId: m.messageId, accepted: true, response: '250 OK' }) },
        einvoices: { deliver: () => Promise.reject(new Error('no e-invoices here')) },
      };
    };
    const customer = { type: 'company', name: 'Kunde A/S', email: 'bogholderi@kunde.dk' };

    it('carries the payment link, its code and the FI line, in the HTML and the text body', async () => {
      const inv = await issue(fikOrg, customer);
      const sent = await call(t.app, 'POST', `/v1/invoices/${inv.id}/send`, { key: fikOrg.apiKey });
      assert.equal(sent.status, 200, sent.raw);
      mailed.length = 0;
      const attempt = await mailInvoice(deps(), inv.id);
      assert.equal(attempt.kind, 'mailed');
      const link = await linkOf(fikOrg, inv.id);
      const [mail] = mailed;
      const line = `+71<${fikPaymentId(inv.number)}+${CREDITOR}<`;
      assert.ok(mail!.text.includes(`Betal fakturaen online: ${link.url}`), mail!.text);
      assert.ok(mail!.text.includes(`Betal med FI-kort: ${line}`), mail!.text);
      assert.ok(mail!.text.includes(`Betalingskode: ${link.paymentCode}`), mail!.text);
      assert.ok(mail!.text.includes('Betal venligst til reg.nr. 1234, kontonr. 0001234567'), mail!.text);
      assert.ok(mail!.html.includes(`href="${link.url}"`), mail!.html);
      assert.ok(mail!.html.includes(`Betal med FI-kort: +71&lt;${fikPaymentId(inv.number)}+${CREDITOR}&lt;`), mail!.html);
      assert.ok(mail!.html.includes(`Betalingskode: ${link.paymentCode}`), mail!.html);
    });

    it('an invoice without a payment id: the link, no FI line; one issued before invoices printed their link gets it when sent', async () => {
      const inv = await issue(plainOrg, customer);
      // As an invoice issued before the issue made its link.
      await testDb().db.sql`DELETE FROM payment_links WHERE invoice_id = ${inv.id}`;
      const sent = await call(t.app, 'POST', `/v1/invoices/${inv.id}/send`, { key: plainOrg.apiKey });
      assert.equal(sent.status, 200, sent.raw);
      assert.equal((await linkRows(inv.id)).length, 1);
      mailed.length = 0;
      assert.equal((await mailInvoice(deps(), inv.id)).kind, 'mailed');
      const link = await linkOf(plainOrg, inv.id);
      assert.ok(mailed[0]!.text.includes(`Betal fakturaen online: ${link.url}`), mailed[0]!.text);
      assert.doesNotMatch(mailed[0]!.text, /FI-kort|\+71</);
      assert.doesNotMatch(mailed[0]!.html, /FI-kort|\+71&lt;/);
    });
  });
});
