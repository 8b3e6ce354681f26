import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { freePort } from '../../deploy/local/ports.ts';
import { createActivities, registerDeployment, startWorkflowsEndpoint, type WorkflowsEndpoint } from '../../workflows/main.ts';
import { createRestateReceiptDispatch } from '../../services/payments/receipt-dispatch.ts';
import { renderPaymentReceipt } from '../../services/payments/render-receipt.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { signTestCallback } from '../../services/payments/providers/test-provider.ts';
import { copenhagenToday } from '../../services/shared/clock.ts';
import { call, createTestOrg, startTestApp, testDb, testRenderer, type TestApp, type TestOrg } from '../helpers/context.ts';
import { pdfText } from '../helpers/pdf-text.ts';
import { wakeDueWork, startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';


const line = (oere: number) => ({ description: 'Kagebord', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

/** Receipts end to end: payment booked → hand-off → PaymentReceipt on a real restate-server → PDF stored write-once → API. */
describe('payment receipts', function () {
  this.timeout(60_000);
  let restate: TestRestate;
  let endpoint: WorkflowsEndpoint;
  let t: TestApp;
  let org: TestOrg;
  const silent = new Writable({ write: (_c, _e, cb) => cb() });
  const today = () => copenhagenToday(new Date());

  before(async () => {
    restate = await startTestRestate();
    const { db, keyring } = testDb();
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(
        db,
        { idempotencyRetentionDays: 30, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined },
        { keyring, mailer: { send: () => Promise.reject(new Error('no mail in this test')) }, pdf: testRenderer() },
      ),
      host: '127.0.0.1',
      port: await freePort(),
      identityKeys: restate.identityKeys,
      logStream: silent,
    });
    await registerDeployment(restate.adminUrl, endpoint.url);
    t = await startTestApp({ receiptDispatch: createRestateReceiptDispatch(restate.ingressUrl, testDb().db) });
    org = await createTestOrg({ name: 'Bager Hansen ApS', street: 'Bagergade 12', postalCode: '8000', city: 'Aarhus C', email: 'regnskab@bager.dk' });
  });
  after(async () => {
    await t?.close();
    await endpoint?.close();
    await restate?.stop();
  });

  const customer = async (language: 'da' | 'en') =>
    (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S', cvr: '87654321', language } })).body.data.id as string;
  const issued = async (customerId: string, oere: number) => {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines: [line(oere)] } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data as { id: string; number: number };
  };
  const receipt = (app: TestApp, paymentId: string, key = org.apiKey) =>
    app.app.inject({ method: 'GET', url: `/v1/payments/${paymentId}/receipt`, headers: { authorization: `Bearer ${key}` } });
  const waitForReceipt = async (paymentId: string) => {
    for (let i = 0; i < 300; i++) {
      const res = await receipt(t, paymentId);
      if (res.statusCode === 200) return res;
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json().error.code, 'receipt_not_ready');
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the receipt of ${paymentId} never appeared`);
  };

  it('a registered payment gets its creditor-branded receipt shortly after; the API serves the stored bytes', async () => {
    const inv = await issued(await customer('da'), 125_000);
    const paid = await call(t.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 125_000, paymentDate: today() } });
    assert.equal(paid.status, 201);
    const paymentId = paid.body.meta.paymentId as string;
    const res = await waitForReceipt(paymentId);
    assert.equal(res.headers['content-type'], 'application/pdf');
    assert.ok(res.rawPayload.subarray(0, 5).equals(Buffer.from('%PDF-')));
    const sha = createHash('sha256').update(res.rawPayload).digest('hex');
    assert.equal(res.headers.etag, `"${sha}"`);
    assert.equal(res.headers['content-disposition'], `inline; filename="receipt-${paymentId}.pdf"`);
    const text = await pdfText(res.rawPayload);
    const [y, m, d] = today().split('-');
    for (const expected of [
      'Kvittering', 'Bager Hansen ApS', 'Bagergade 12', '8000 Aarhus C', 'CVR-nr. 12345678', 'regnskab@bager.dk',
      'MODTAGET FRA', 'Kunde A/S', 'CVR-nr. 87654321', `Kvitteringsnr. ${paymentId}`, `Betalingsdato ${d}-${m}-${y}`,
      'Betalingsmåde Registreret af kreditor', `Faktura nr. ${inv.number}`, 'Modtaget beløb 1.250,00 kr.', 'Fakturabeløb 1.250,00 kr.',
      `Faktura nr. ${inv.number} er hermed betalt.`, 'Kvitteringen er udstedt af Bager Hansen ApS.',
    ]) {
      assert.ok(text.includes(expected), `missing ${JSON.stringify(expected)} in:\n${text}`);
    }
    const [row] = await testDb().db.sql<{ document_sha256: Buffer; language: string; rendered_at: Date | null }[]>`
      SELECT document_sha256, language, rendered_at FROM payment_receipts WHERE payment_id = ${paymentId}`;
    assert.equal(row!.document_sha256.toString('hex'), sha);
    assert.equal(row!.language, 'da');
    assert.ok(row!.rendered_at);
  });

  it('until it is rendered the answer is 404 receipt_not_ready with Retry-After; a lost hand-off is picked up by the sweep', async () => {
    const lost = await startTestApp({ receiptDispatch: { dispatch: () => Promise.reject(new Error('engine unreachable')) } });
    try {
      const inv = await issued(await customer('da'), 50_000);
      const paid = await call(lost.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 20_000, paymentDate: today() } });
      assert.equal(paid.status, 201, 'the payment stands although the hand-off failed');
      assert.match(lost.logs(), /post-commit hand-off failed/);
      const paymentId = paid.body.meta.paymentId as string;
      await new Promise((r) => setTimeout(r, 300));
      const notReady = await receipt(lost, paymentId);
      assert.equal(notReady.statusCode, 404);
      assert.equal(notReady.headers['retry-after'], '2');
      assert.deepEqual(Object.keys(notReady.json().error).sort(), ['code', 'message', 'requestId']);
      assert.equal(notReady.json().error.code, 'receipt_not_ready');
      const handed = await wakeDueWork(testDb().db, restate.ingressUrl, org.organizationId);
      assert.ok(handed >= 1);
      const text = await pdfText((await waitForReceipt(paymentId)).rawPayload);
      assert.ok(text.includes(`Delbetaling af faktura nr. ${inv.number}.`), text);
      assert.ok(text.includes('Modtaget beløb 200,00 kr.'), text);
    } finally {
      await lost.close();
    }
  });

  it('a payment booked by a provider callback gets its receipt too (English customer, card, transaction id, surplus)', async () => {
    const pay: TestPay = await startTestPay({ receiptDispatch: createRestateReceiptDispatch(restate.ingressUrl, testDb().db) });
    try {
      const inv = await issued(await customer('en'), 30_000);
      const link = (await call(t.app, 'POST', `/v1/invoices/${inv.id}/payment-link`, { key: org.apiKey })).body.data;
      const opened = await pay.app.inject({
        method: 'POST', url: `/p/${link.reference}/checkout`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'method=card&lang=en',
      });
      assert.equal(opened.statusCode, 303);
      const [s] = await testDb().db.sql<{ id: string; provider_session_id: string }[]>`SELECT id, provider_session_id FROM checkout_sessions WHERE invoice_id = ${inv.id}`;
      // Paid by transfer meanwhile, so the card payment overpays by 10 000 øre.
      await call(t.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 10_000, paymentDate: today() } });
      const providerPaymentId = `tpay_${randomBytes(8).toString('hex')}`;
      const body = JSON.stringify({
        id: `tevt_${randomBytes(8).toString('hex')}`, type: 'payment.succeeded', created: Math.floor(Date.now() / 1000),
        data: { session: s!.provider_session_id, client_reference: s!.id, payment: providerPaymentId, amount: 30_000, currency: 'DKK', method: 'card' },
      });
      const res = await pay.app.inject({
        method: 'POST', url: '/callbacks/test', payload: body,
        headers: { 'content-type': 'application/json', 'test-provider-signature': signTestCallback(pay.secret, body, Math.floor(Date.now() / 1000)) },
      });
      assert.deepEqual(res.json(), { received: true, effect: 'booked' });
      const [p] = await testDb().db.sql<{ id: string }[]>`SELECT id FROM payments WHERE invoice_id = ${inv.id} AND source = 'card'`;
      const text = await pdfText((await waitForReceipt(p!.id)).rawPayload);
      for (const expected of [
        'Receipt', 'RECEIVED FROM', 'Payment method Payment card', `Transaction id ${providerPaymentId}`, `Invoice no. ${inv.number}`,
        'Amount received DKK 300.00', 'Invoice total DKK 300.00', 'DKK 100.00 exceeds the amount due and is held as a credit with Bager Hansen ApS.',
      ]) {
        assert.ok(text.includes(expected), `missing ${JSON.stringify(expected)} in:\n${text}`);
      }
    } finally {
      await pay.close();
    }
  });

  it('a receipt is written once: rendering again changes nothing, and the row refuses UPDATE and DELETE', async () => {
    const inv = await issued(await customer('da'), 10_000);
    const paid = await call(t.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 10_000, paymentDate: today() } });
    const paymentId = paid.body.meta.paymentId as string;
    const first = await waitForReceipt(paymentId);
    const { db, keyring } = testDb();
    const again = await renderPaymentReceipt({ db, keyring, pdf: testRenderer(), documents: createPostgresDocumentStore() }, paymentId);
    assert.deepEqual(again, { status: 'exists' });
    assert.deepEqual((await receipt(t, paymentId)).rawPayload, first.rawPayload);
    await assert.rejects(db.sql`UPDATE payment_receipts SET language = 'en' WHERE payment_id = ${paymentId}`, /receipts are write-once: UPDATE/);
    await assert.rejects(db.sql`DELETE FROM payment_receipts WHERE payment_id = ${paymentId}`, /receipts are write-once: DELETE/);
    const unknown = await renderPaymentReceipt({ db, keyring, pdf: testRenderer(), documents: createPostgresDocumentStore() }, '0190a0a0-0000-7000-8000-000000000000');
    assert.deepEqual(unknown, { status: 'unknown' });
  });

  it('an unknown payment, or another organisation\'s, is 404 payment_not_found', async () => {
    const other = await createTestOrg({ name: 'Anden ApS' });
    const inv = await issued(await customer('da'), 10_000);
    const paid = await call(t.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 5_000, paymentDate: today() } });
    for (const [id, key] of [[paid.body.meta.paymentId, other.apiKey], ['0190a0a0-0000-7000-8000-000000000000', org.apiKey], ['nope', org.apiKey]]) {
      const res = await receipt(t, id, key);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'payment_not_found');
    }
  });
});
