import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpAccessPoint } from '../../activities/einvoices/http-access-point.ts';
import { createLocalAccessPoint } from '../../activities/einvoices/local-access-point.ts';
import { mailInvoice, recordInvoiceMail, type InvoiceMailDeps } from '../../activities/invoices/deliver-invoice-mail.ts';
import { createFileMailer } from '../../activities/mail/file-mailer.ts';
import type { EInvoiceDelivery } from '../../services/einvoices/einvoice-port.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/** A real access point on loopback: records every POST, answers with the next scripted status, and keeps one delivery per Idempotency-Key. */
function accessPoint() {
  const requests: { key: string; auth: string; body: Record<string, string> }[] = [];
  const deliveries = new Map<string, string>();
  const script: number[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString('utf8')));
    req.on('end', () => {
      const key = String(req.headers['idempotency-key']);
      requests.push({ key, auth: String(req.headers.authorization), body: JSON.parse(text) as Record<string, string> });
      const status = script.shift() ?? 201;
      if (status >= 300) {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: status < 500 ? 'Unknown receiver 0088:5798009882806 in the SML' : 'busy' } }));
        return;
      }
      if (!deliveries.has(key)) deliveries.set(key, `ap-${deliveries.size + 1}`);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ reference: deliveries.get(key) }));
    });
  });
  return {
    requests,
    deliveries,
    script,
    start: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1/documents`))),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const delivery = (over: Partial<EInvoiceDelivery> = {}): EInvoiceDelivery => ({
  id: 'send-1', organizationId: 'org', sender: '0184:12345678', receiver: '0088:5798009882806', profile: 'oioubl', documentType: 'Invoice',
  document: Buffer.from('<Invoice/>'), sha256: 'a'.repeat(64), ...over,
});

/**
 * The e-invoice channel (docs/einvoicing.md, "Delivery"): the access point's HTTP adapter against a real receiver on
 * loopback, the local adapter's files, and the invoice send through it, exactly once across a crash between the
 * access point's 2xx and the record.
 */
describe('e-invoice delivery', function () {
  this.timeout(60_000);
  const ap = accessPoint();
  let url: string;
  const log = () => {};

  before(async () => {
    url = await ap.start();
  });
  after(() => ap.stop());
  beforeEach(() => {
    ap.requests.length = 0;
    ap.script.length = 0;
  });

  describe('the HTTP access point', () => {
    it('POSTs {sender, receiver, profile, documentType, document} with the bearer key and the delivery id as Idempotency-Key', async () => {
      const sent = await createHttpAccessPoint({ url, apiKey: 'ap-secret', log }).deliver(delivery());
      assert.equal(sent.reference, 'ap-1');
      assert.equal(ap.requests.length, 1);
      const [req] = ap.requests;
      assert.equal(req!.key, 'send-1');
      assert.equal(req!.auth, 'Bearer ap-secret');
      assert.deepEqual(req!.body, { sender: '0184:12345678', receiver: '0088:5798009882806', profile: 'oioubl', documentType: 'Invoice', document: Buffer.from('<Invoice/>').toString('base64') });
    });

    it('a 4xx is a refusal for good with the provider’s message', async () => {
      ap.script.push(422);
      const err = await createHttpAccessPoint({ url, apiKey: 'k', log }).deliver(delivery({ id: 'send-2' })).catch((e: unknown) => e);
      assert.ok(err instanceof DomainError);
      assert.equal(err.code, 'einvoice_rejected');
      assert.match(err.message, /Unknown receiver 0088:5798009882806 in the SML/);
    });

    it('a 5xx or no answer is an error to retry', async () => {
      ap.script.push(503);
      const err = await createHttpAccessPoint({ url, apiKey: 'k', log }).deliver(delivery({ id: 'send-3' })).catch((e: unknown) => e);
      assert.ok(err instanceof Error && !(err instanceof DomainError), String(err));
      const down = await createHttpAccessPoint({ url: 'http://127.0.0.1:9/x', apiKey: 'k', log }).deliver(delivery()).catch((e: unknown) => e);
      assert.ok(down instanceof Error && !(down instanceof DomainError));
    });
  });

  it('the local access point keeps <sha256>.xml and its <sha256>.json sidecar, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'einvoices-'));
    const local = createLocalAccessPoint(dir, log);
    const d = delivery({ sha256: 'b'.repeat(64) });
    assert.deepEqual(await local.deliver(d), { reference: 'b'.repeat(64) });
    assert.deepEqual(await local.deliver(d), { reference: 'b'.repeat(64) });
    assert.deepEqual(readdirSync(dir).sort(), [`${'b'.repeat(64)}.json`, `${'b'.repeat(64)}.xml`]);
    assert.equal(readFileSync(join(dir, `${'b'.repeat(64)}.xml`), 'utf8'), '<Invoice/>');
    assert.deepEqual(JSON.parse(readFileSync(join(dir, `${'b'.repeat(64)}.json`), 'utf8')), {
      sender: '0184:12345678', receiver: '0088:5798009882806', profile: 'oioubl', documentType: 'Invoice', sha256: 'b'.repeat(64),
    });
  });

  describe('the invoice send', () => {
    let t: TestApp;
    let org: TestOrg;
    let deps: InvoiceMailDeps;

    before(async () => {
      t = await startTestApp({ mailDispatch: { dispatch: async () => {} } });
      org = await createTestOrg({ bankReg: '1234', bankAccount: '0001234567' });
      const { db, keyring } = testDb();
      deps = {
        db, keyring, documents: t.deps.documents, fromAddress: 'faktura@faktura.invalid', trackingPixelUrl: () => null,
        mailer: createFileMailer(mkdtempSync(join(tmpdir(), 'einvoice-mail-')), log),
        einvoices: createHttpAccessPoint({ url, apiKey: 'ap-secret', log }),
      };
    });
    after(() => t.close());

    const sendToGln = async () => {
      const customer = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kommune', cvr: '87654321', ean: '5798009882806', email: 'post@kommune.dk' } });
      const res = await call(t.app, 'POST', '/v1/invoices?send=true', {
        key: org.apiKey, body: { customerId: customer.body.data.id, buyerReference: 'Afd. 7', lines: [{ description: 'Rådgivning', quantity: 1, unitPriceOere: 100000 }] },
      });
      assert.equal(res.status, 201, res.raw);
      assert.deepEqual(res.body.meta.send, { status: 'sent', channel: 'einvoice' });
      return res.body.data.id as string;
    };
    const timeline = async (invoiceId: string) =>
      (await call(t.app, 'GET', `/v1/invoices/${invoiceId}/timeline`, { key: org.apiKey })).body.data.map((e: { code: string; data: unknown }) => ({ code: e.code, data: e.data }));

    it('delivers once across a crash between the access point’s 2xx and the record: the second POST carries the same Idempotency-Key', async () => {
      const invoiceId = await sendToGln();
      const first = await mailInvoice(deps, invoiceId);
      assert.equal(first.kind, 'einvoiced');
      // The process dies here: the access point took the document, nothing was recorded. The step runs again.
      const again = await mailInvoice(deps, invoiceId);
      assert.equal(ap.requests.length, 2);
      assert.equal(ap.requests[0]!.key, ap.requests[1]!.key);
      assert.deepEqual(again, first);
      assert.equal(ap.requests[0]!.body.receiver, '0088:5798009882806');
      assert.equal(ap.requests[0]!.body.sender, '0184:12345678');
      assert.equal(ap.requests[0]!.body.profile, 'oioubl');
      // The document is the invoice's stored e-invoice, the same bytes GET …/einvoice answers.
      const served = await t.app.inject({ method: 'GET', url: `/v1/invoices/${invoiceId}/einvoice`, headers: { authorization: `Bearer ${org.apiKey}` } });
      assert.equal(ap.requests[0]!.body.document, served.rawPayload.toString('base64'));

      assert.deepEqual(await recordInvoiceMail(deps, invoiceId, again), { status: 'sent' });
      assert.deepEqual(await recordInvoiceMail(deps, invoiceId, again), { status: 'sent' });
      const sha = (again as { sha256: string }).sha256;
      assert.deepEqual((await timeline(invoiceId)).filter((e: { code: string }) => e.code.startsWith('einvoice')), [
        { code: 'einvoice_sent', data: { reference: (again as { reference: string }).reference, sha256: sha } },
      ]);
      const [send] = await testDb().db.sql<{ status: string; channel: string }[]>`SELECT status, channel FROM invoice_sends WHERE invoice_id = ${invoiceId}`;
      assert.deepEqual({ ...send }, { status: 'sent', channel: 'einvoice' });
      // A later send answers from the record and delivers nothing.
      const resend = await call(t.app, 'POST', `/v1/invoices/${invoiceId}/send`, { key: org.apiKey });
      assert.deepEqual(resend.body.meta.send, { status: 'sent', channel: 'einvoice' });
    });

    it('a refusal is recorded as failed with einvoice_rejected and the provider’s message on the timeline', async () => {
      const invoiceId = await sendToGln();
      ap.script.push(400);
      const attempt = await mailInvoice(deps, invoiceId);
      assert.equal(attempt.kind, 'refused');
      assert.deepEqual(await recordInvoiceMail(deps, invoiceId, attempt), { status: 'failed', code: 'einvoice_rejected' });
      const failed = (await timeline(invoiceId)).find((e: { code: string }) => e.code === 'einvoice_failed');
      assert.equal(failed.data.code, 'einvoice_rejected');
      assert.match(failed.data.message, /Unknown receiver 0088:5798009882806 in the SML/);
      const [send] = await testDb().db.sql<{ failure_code: string }[]>`SELECT failure_code FROM invoice_sends WHERE invoice_id = ${invoiceId}`;
      assert.equal(send!.failure_code, 'einvoice_rejected');
    });

    it('a 5xx is thrown for the step to retry, counted on the send; the retry delivers', async () => {
      const invoiceId = await sendToGln();
      ap.script.push(502);
      await assert.rejects(mailInvoice(deps, invoiceId));
      const [send] = await testDb().db.sql<{ attempts: number; last_error: string }[]>`SELECT attempts, last_error FROM invoice_sends WHERE invoice_id = ${invoiceId}`;
      assert.equal(send!.attempts, 1);
      const attempt = await mailInvoice(deps, invoiceId);
      assert.equal(attempt.kind, 'einvoiced');
      assert.equal(ap.requests[0]!.key, ap.requests[1]!.key);
    });

    it('a customer without an e-invoice address is sent an e-mail: channel email', async () => {
      const customer = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Firma', email: 'a@b.dk' } });
      const res = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: customer.body.data.id, lines: [{ description: 'X', quantity: 1, unitPriceOere: 100 }] } });
      assert.deepEqual(res.body.meta.send, { status: 'sent', channel: 'email' });
    });
  });
});
