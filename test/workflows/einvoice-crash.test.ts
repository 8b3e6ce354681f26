import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../../deploy/local/ports.ts';
import { createRestateMailDispatch } from '../../services/invoices/restate-mail-dispatch.ts';
import { call, createTestOrg, startTestApp, TEST_MASTER_KEY, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { startWorkerProcess, within } from '../helpers/worker-process.ts';

/**
 * An e-invoice send survives a killed workflows process between the access point's 2xx and the record
 * (docs/einvoicing.md, "Delivery"): the delivery's id is the send's, so the retried step POSTs again with the same
 * Idempotency-Key, the access point (which, like a provider honouring the key, answers a repeated key with its first
 * reference) delivers once, and the send is recorded once.
 *
 * The workflows endpoint runs in a child process (fixtures/einvoice-worker.ts) with the real activities and the HTTP
 * access-point adapter; it stops after the first 2xx and is killed there with SIGKILL; a fresh child on the same
 * endpoint address takes over, and Restate retries the invocation from its journal.
 */
describe('an e-invoice send survives a killed workflows process', function () {
  this.timeout(120_000);
  let restate: TestRestate;
  let t: TestApp;
  let org: TestOrg;
  let server: Server;
  let apUrl: string;
  const posts: { key: string; document: string }[] = [];
  const references = new Map<string, string>();
  const workers = new Set<ChildProcess>();

  before(async () => {
    // Rows other test files left due would otherwise be the first work this file's faulty worker meets.
    await testDb().db.sql`DELETE FROM wake_index`;
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        const key = String(req.headers['idempotency-key']);
        posts.push({ key, document: (JSON.parse(text) as { document: string }).document });
        if (!references.has(key)) references.set(key, `AP-${references.size + 1}`);
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ reference: references.get(key) }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    apUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/documents`;
    restate = await startTestRestate({ RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: '200', RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '250ms' });
    t = await startTestApp({ mailDispatch: createRestateMailDispatch(restate.ingressUrl, testDb().db) });
    org = await createTestOrg({ bankReg: '1234', bankAccount: '0001234567' });
  });
  after(async () => {
    for (const child of workers) child.kill('SIGKILL');
    await t?.close();
    await restate?.stop();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const startWorker = (port: number, fault: string) =>
    startWorkerProcess(
      'test/workflows/fixtures/einvoice-worker.ts',
      [process.env.TEST_DATABASE_URL!, TEST_MASTER_KEY.toString('hex'), restate.adminUrl, apUrl, String(port)],
      { EINVOICE_FAULT: fault, RESTATE_IDENTITY_KEYS: restate.identityKeys.join(',') },
      workers,
    );

  it('killed after the access point’s 2xx, before the record: the second POST carries the same Idempotency-Key, delivered and recorded once', async () => {
    const port = await freePort();
    const faulty = await startWorker(port, 'handed');
    const customer = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kommune', cvr: '87654321', ean: '5798009882806' } });
    const sent = await call(t.app, 'POST', '/v1/invoices?send=true', {
      key: org.apiKey, body: { customerId: customer.body.data.id, buyerReference: 'Afd. 7', lines: [{ description: 'Rådgivning', quantity: 1, unitPriceOere: 100000 }] },
    });
    assert.equal(sent.status, 201, sent.raw);
    assert.deepEqual(sent.body.meta.send, { status: 'sent', channel: 'einvoice' });
    const invoiceId: string = sent.body.data.id;

    const stopped = await within('the worker to stop after the 2xx', faulty.stopped, 60_000);
    assert.deepEqual(stopped, { point: 'handed', id: invoiceId });
    assert.equal(posts.length, 1);
    const [before] = await testDb().db.sql<{ status: string }[]>`SELECT status FROM invoice_sends WHERE invoice_id = ${invoiceId}`;
    assert.equal(before!.status, 'queued', 'nothing recorded before the kill');
    await faulty.kill();

    const fresh = await startWorker(port, '');
    const deadline = Date.now() + 60_000;
    let status = 'queued';
    while (status === 'queued' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await testDb().db.sql<{ status: string }[]>`SELECT status FROM invoice_sends WHERE invoice_id = ${invoiceId}`)[0]!.status;
    }
    assert.equal(status, 'sent');
    await new Promise((r) => setTimeout(r, 500)); // a late duplicate would arrive now, if at all
    await fresh.kill();

    assert.equal(posts.length, 2, 'the retried step POSTed again');
    assert.equal(posts[0]!.key, posts[1]!.key, 'with the same Idempotency-Key');
    assert.equal(posts[0]!.document, posts[1]!.document, 'the same document');
    assert.equal(references.size, 1, 'one delivery at the access point');
    const timeline = (await call(t.app, 'GET', `/v1/invoices/${invoiceId}/timeline`, { key: org.apiKey })).body.data.filter((e: { code: string }) =>
      e.code.startsWith('einvoice'),
    );
    assert.deepEqual(timeline.map((e: { code: string; data: { reference: string } }) => [e.code, e.data.reference]), [['einvoice_sent', 'AP-1']]);
    const events = await testDb().db.sql`SELECT 1 FROM events WHERE organization_id = ${org.organizationId} AND entity_id = ${invoiceId} AND type = 'invoice.sent'`;
    assert.equal(events.length, 1);
  });
});
