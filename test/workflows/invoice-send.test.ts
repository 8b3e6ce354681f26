import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import { createSmtpMailer } from '../../activities/mail/smtp-mailer.ts';
import { createRestateMailDispatch } from '../../services/invoices/restate-mail-dispatch.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { createActivities, registerDeployment, startWorkflowsEndpoint, type WorkflowsEndpoint } from '../../workflows/main.ts';
import { call, createTestOrg, startTestApp, testDb, testRenderer, type TestApp, type TestOrg } from '../helpers/context.ts';
import { wakeDueWork, startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { header, leaves, parseMime } from '../helpers/mime.ts';

/** Sending an invoice end to end: API → Restate → workflow → real SMTP server, and the timeline it leaves. */
describe('sending invoices by e-mail', () => {
  let restate: TestRestate;
  let endpoint: WorkflowsEndpoint;
  let t: TestApp;
  let org: TestOrg;
  let smtp: SMTPServer;
  let rejectNext = 0;
  const received: Buffer[] = [];
  const silent = new Writable({ write: (_c, _e, cb) => cb() });

  before(async () => {
    smtp = new SMTPServer({
      secure: false, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], logger: false,
      onRcptTo: (address, _s, cb) =>
        address.address.startsWith('reject') ? cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 })) : cb(),
      onData: (stream, _s, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (rejectNext > 0) {
            rejectNext--;
            return cb(Object.assign(new Error('try again later'), { responseCode: 451 }));
          }
          received.push(Buffer.concat(chunks));
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
    const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
    restate = await startTestRestate();
    const { db, keyring } = testDb();
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(
        db,
        { idempotencyRetentionDays: 30, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: 'http://127.0.0.1:9' },
        { keyring, mailer: createSmtpMailer(smtpUrl, () => {}), pdf: testRenderer() },
      ),
      host: '127.0.0.1',
      port: await freePort(),
      identityKeys: restate.identityKeys,
      logStream: silent,
    });
    await registerDeployment(restate.adminUrl, endpoint.url);
    t = await startTestApp({ mailDispatch: createRestateMailDispatch(restate.ingressUrl, testDb().db) });
    org = await createTestOrg({ name: 'Bager Hansen ApS', email: 'regnskab@bager.dk', bankReg: '1234', bankAccount: '0001234567' });
  });
  after(async () => {
    await t?.close();
    await endpoint?.close();
    await restate?.stop();
    await new Promise<void>((r) => smtp.close(() => r()));
  });

  const timeline = async (id: string, until: string): Promise<string[]> => {
    for (let i = 0; i < 200; i++) {
      const codes = (await call(t.app, 'GET', `/v1/invoices/${id}/timeline`, { key: org.apiKey })).body.data.map((x: { code: string }) => x.code);
      if (codes.includes(until)) return codes;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timeline of ${id} never reached ${until}`);
  };

  const customer = async (email: string | null, language: 'da' | 'en' = 'da') =>
    (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S', email, language } })).body.data.id as string;
  const lines = [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4500 }];

  it('creates, issues and sends in one call; the mail carries the PDF; a second send does not mail again', async () => {
    const before = received.length;
    const res = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer('ap@kunde.dk'), lines } });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.status, 'issued');
    assert.deepEqual(res.body.meta, { send: { status: 'sent', channel: 'email' } });
    const id = res.body.data.id;
    assert.deepEqual(await timeline(id, 'delivered'), ['created', 'issued', 'sent', 'delivered']);
    assert.equal(received.length, before + 1);
    const mail = parseMime(received.at(-1)!);
    assert.match(header(mail, 'subject') ?? '', /Faktura/);
    assert.match(header(mail, 'reply-to') ?? '', /regnskab@bager\.dk/);
    const pdfPart = leaves(mail).find((p) => (header(p, 'content-type') ?? '').startsWith('application/pdf'));
    assert.ok(pdfPart, 'the PDF is attached');
    const served = await t.app.inject({ method: 'GET', url: `/v1/invoices/${id}/pdf`, headers: { authorization: `Bearer ${org.apiKey}` } });
    assert.deepEqual(pdfPart.body, served.rawPayload);
    const invoice = (await call(t.app, 'GET', `/v1/invoices/${id}`, { key: org.apiKey })).body.data;
    assert.notEqual(invoice.sentAt, null);
    const again = await call(t.app, 'POST', `/v1/invoices/${id}/send`, { key: org.apiKey });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.meta, { send: { status: 'sent', channel: 'email' } });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(received.length, before + 1, 'no second mail');
    const events = await testDb().db.sql<{ type: string }[]>`SELECT type FROM events WHERE entity_id = ${id} ORDER BY sekvensnummer`;
    assert.deepEqual(events.map((e) => e.type), ['invoice.issued', 'invoice.sent']);
  });

  it('answers customer_email_missing at once and keeps the invoice issued', async () => {
    const res = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer(null), lines } });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.status, 'issued');
    assert.deepEqual(res.body.meta, { send: { status: 'failed', code: 'customer_email_missing', channel: 'email' } });
    assert.deepEqual(await timeline(res.body.data.id, 'send_failed'), ['created', 'issued', 'send_failed']);
  });

  it('retries a transient SMTP failure and records a permanent one as send_failed', async () => {
    rejectNext = 1;
    const retried = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer('later@kunde.dk'), lines } });
    assert.deepEqual(await timeline(retried.body.data.id, 'delivered'), ['created', 'issued', 'sent', 'delivered']);
    const [row] = await testDb().db.sql<{ attempts: number }[]>`SELECT attempts FROM invoice_sends WHERE invoice_id = ${retried.body.data.id}`;
    assert.equal(row!.attempts, 2);
    const rejected = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer('reject@kunde.dk'), lines } });
    assert.deepEqual(rejected.body.meta, { send: { status: 'sent', channel: 'email' } });
    assert.deepEqual(await timeline(rejected.body.data.id, 'send_failed'), ['created', 'issued', 'send_failed']);
    // A new send after a refusal tries again (the address may have been corrected); this one is refused again.
    const retry = await call(t.app, 'POST', `/v1/invoices/${rejected.body.data.id}/send`, { key: org.apiKey });
    assert.deepEqual(retry.body.meta, { send: { status: 'sent', channel: 'email' } });
    for (let i = 0; i < 100; i++) {
      const codes = (await call(t.app, 'GET', `/v1/invoices/${rejected.body.data.id}/timeline`, { key: org.apiKey })).body.data.map((x: { code: string }) => x.code);
      if (codes.filter((c: string) => c === 'send_failed').length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const [refused] = await testDb().db.sql<{ status: string; failure_code: string }[]>`SELECT status, failure_code FROM invoice_sends WHERE invoice_id = ${rejected.body.data.id}`;
    assert.deepEqual({ ...refused }, { status: 'failed', failure_code: 'mail_rejected' });
  });

  it('the sweep hands on a send whose post-commit hand-off was lost', async () => {
    const lost = await startTestApp({ mailDispatch: { dispatch: () => Promise.reject(new Error('engine unreachable')) } });
    try {
      const res = await call(lost.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer('lost@kunde.dk'), lines } });
      assert.deepEqual(res.body.meta, { send: { status: 'sent', channel: 'email' } });
      assert.match(lost.logs(), /post-commit hand-off failed/);
      const [row] = await testDb().db.sql<{ status: string }[]>`SELECT status FROM invoice_sends WHERE invoice_id = ${res.body.data.id}`;
      assert.equal(row!.status, 'queued');
      const handed = await wakeDueWork(testDb().db, restate.ingressUrl, org.organizationId);
      assert.ok(handed >= 1);
      assert.deepEqual(await timeline(res.body.data.id, 'delivered'), ['created', 'issued', 'sent', 'delivered']);
    } finally {
      await lost.close();
    }
  });

  it('an issue whose PDF could not be rendered is finished by the InvoiceIssue workflow, mail included; the retry replays it', async () => {
    const broken = await startTestApp({
      mailDispatch: createRestateMailDispatch(restate.ingressUrl, testDb().db),
      pdf: { render: () => Promise.reject(new Error('renderer crashed')), close: async () => {} },
    });
    try {
      const key = `issue-finish-${Date.now()}`;
      const body = { customerId: await customer('finish@kunde.dk'), lines };
      const first = await call(broken.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body, idempotencyKey: key });
      assert.equal(first.status, 409);
      assert.equal(first.body.error.code, 'idempotency_in_progress');
      assert.equal(first.headers['retry-after'], '1');
      const [reserved] = await testDb().db.sql<{ invoice_id: string }[]>`SELECT invoice_id FROM invoice_issues WHERE idempotency_key = ${key}`;
      const id = reserved!.invoice_id;
      const locked = (await call(t.app, 'GET', `/v1/invoices/${id}`, { key: org.apiKey })).body.data;
      assert.deepEqual([locked.status, locked.number], ['draft', null], 'not issued for any reader before its PDF exists');

      const handed = await wakeDueWork(testDb().db, restate.ingressUrl, org.organizationId);
      assert.ok(handed >= 1);
      assert.deepEqual(await timeline(id, 'delivered'), ['created', 'issued', 'sent', 'delivered']);
      const [left] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM invoice_issues WHERE invoice_id = ${id}`;
      assert.equal(left!.n, 0);

      const retry = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body, idempotencyKey: key });
      assert.equal(retry.status, 201);
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      assert.equal(retry.headers.location, `/v1/invoices/${id}`);
      assert.equal(retry.body.data.id, id);
      assert.equal(retry.body.data.status, 'issued');
      assert.equal(typeof retry.body.data.number, 'number');
      assert.deepEqual(retry.body.meta, { send: { status: 'sent', channel: 'email' }, replayed: true });
      const pdf = await t.app.inject({ method: 'GET', url: `/v1/invoices/${id}/pdf`, headers: { authorization: `Bearer ${org.apiKey}` } });
      assert.equal(pdf.statusCode, 200);
    } finally {
      await broken.close();
    }
  });

  it('a draft cannot be sent (422 invoice_not_issued)', async () => {
    const draft = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId: await customer('d@kunde.dk'), lines } });
    const res = await call(t.app, 'POST', `/v1/invoices/${draft.body.data.id}/send`, { key: org.apiKey });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'invoice_not_issued');
  });

  it('the tracking pixel records opened once', async () => {
    const res = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer('open@kunde.dk'), lines } });
    const id = res.body.data.id;
    await timeline(id, 'delivered');
    const html = leaves(parseMime(received.at(-1)!)).find((p) => (header(p, 'content-type') ?? '').startsWith('text/html'))!.body.toString();
    const src = /src="http:\/\/127\.0\.0\.1:9(\/t\/o\/[^"]+)"/.exec(html)![1]!;
    for (let i = 0; i < 2; i++) {
      const pixel = await t.app.inject({ method: 'GET', url: src });
      assert.equal(pixel.statusCode, 200);
      assert.equal(pixel.headers['content-type'], 'image/gif');
    }
    const bogus = await t.app.inject({ method: 'GET', url: src.replace(/.{6}\.gif$/, 'AAAAAA.gif') });
    assert.equal(bogus.statusCode, 200);
    assert.deepEqual(await timeline(id, 'opened'), ['created', 'issued', 'sent', 'delivered', 'opened']);
  });
});
