import assert from 'node:assert/strict';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

describe('invoice reads: lists, filters, isolation, document integrity', () => {
  let t: TestApp;
  let a: TestOrg;
  let b: TestOrg;
  let aCustomer: string;
  let bIssued: { id: string };
  let bNote: { id: string };
  const lines = [{ description: 'Vare', quantity: 1, unitPriceOere: 1000 }];

  before(async () => {
    t = await startTestApp();
    a = await createTestOrg();
    b = await createTestOrg();
    aCustomer = (await call(t.app, 'POST', '/v1/customers', { key: a.apiKey, body: { type: 'person', name: 'A' } })).body.data.id;
    const bCustomer = (await call(t.app, 'POST', '/v1/customers', { key: b.apiKey, body: { type: 'person', name: 'B' } })).body.data.id;
    bIssued = (await call(t.app, 'POST', '/v1/invoices?issue=true', { key: b.apiKey, body: { customerId: bCustomer, lines, externalReference: 'b-ref' } })).body.data;
    bNote = (await call(t.app, 'POST', `/v1/invoices/${bIssued.id}/credit`, { key: b.apiKey, body: { reason: 'x' } })).body.data;
  });
  after(() => t.close());

  it('filters by status, customerId and externalReference, newest first, with cursors', async () => {
    const other = (await call(t.app, 'POST', '/v1/customers', { key: a.apiKey, body: { type: 'person', name: 'Other' } })).body.data.id;
    const made = [];
    for (let i = 0; i < 5; i++) {
      const issue = i % 2 === 0;
      made.push((await call(t.app, 'POST', `/v1/invoices${issue ? '?issue=true' : ''}`, {
        key: a.apiKey,
        body: { customerId: i === 4 ? other : aCustomer, lines, externalReference: `ref-${i}` },
      })).body.data);
    }
    const ids = async (q: string) => (await call(t.app, 'GET', `/v1/invoices?${q}`, { key: a.apiKey })).body.data.map((i: { id: string }) => i.id);
    assert.deepEqual(await ids('status=issued'), [made[4].id, made[2].id, made[0].id]);
    assert.deepEqual(await ids('status=draft'), [made[3].id, made[1].id]);
    assert.deepEqual(await ids(`customerId=${other}`), [made[4].id]);
    assert.deepEqual(await ids('externalReference=ref-3'), [made[3].id]);
    assert.deepEqual(await ids('status=paid'), []);
    const p1 = await call(t.app, 'GET', '/v1/invoices?limit=2', { key: a.apiKey });
    const p2 = await call(t.app, 'GET', `/v1/invoices?limit=2&cursor=${p1.body.meta.nextCursor}`, { key: a.apiKey });
    const p3 = await call(t.app, 'GET', `/v1/invoices?limit=2&cursor=${p2.body.meta.nextCursor}`, { key: a.apiKey });
    assert.deepEqual([...p1.body.data, ...p2.body.data, ...p3.body.data].map((i: { id: string }) => i.id), [...made].reverse().map((i) => i.id));
    assert.equal(p3.body.meta.nextCursor, null);
    const bad = await call(t.app, 'GET', `/v1/invoices?status=issued&cursor=${p1.body.meta.nextCursor}`, { key: a.apiKey });
    assert.equal(bad.body.error.code, 'invalid_cursor');
    const unknownStatus = await call(t.app, 'GET', '/v1/invoices?status=void', { key: a.apiKey });
    assert.equal(unknownStatus.status, 400);
    // One sentence naming the statuses there are, not one "must be equal to constant" per literal.
    assert.match(unknownStatus.body.error.message, /^\/status must be one of: draft, issued, [a-z, ]+\.$/);
    assert.deepEqual(unknownStatus.body.error.details, [{ path: '/status', message: unknownStatus.body.error.details[0].message }]);
    assert.match(unknownStatus.body.error.details[0].message, /^querystring must be one of: draft, issued, /);
  });

  it('another organisation’s invoice or credit note answers exactly like an unknown id on every route @cluster', async () => {
    const unknown = '0190a8a0-0000-7000-8000-00000000abcd';
    const routes: [string, string, unknown][] = [
      ['GET', '/v1/invoices/ID', undefined],
      ['PUT', '/v1/invoices/ID', { customerId: aCustomer, lines }],
      ['DELETE', '/v1/invoices/ID', undefined],
      ['POST', '/v1/invoices/ID/issue', undefined],
      ['POST', '/v1/invoices/ID/send', undefined],
      ['GET', '/v1/invoices/ID/pdf', undefined],
      ['GET', '/v1/invoices/ID/timeline', undefined],
      ['POST', '/v1/invoices/ID/credit', { reason: 'x' }],
    ];
    for (const [method, url, body] of routes) {
      const foreign = await call(t.app, method, url.replace('ID', bIssued.id), { key: a.apiKey, body });
      const missing = await call(t.app, method, url.replace('ID', unknown), { key: a.apiKey, body });
      assert.equal(foreign.status, 404, `${method} ${url}`);
      assert.deepEqual({ ...foreign.body.error, requestId: 0 }, { ...missing.body.error, requestId: 0 }, `${method} ${url}`);
      assert.equal(foreign.body.error.code, 'invoice_not_found');
    }
    for (const url of ['/v1/creditnotes/ID', '/v1/creditnotes/ID/pdf']) {
      const foreign = await call(t.app, 'GET', url.replace('ID', bNote.id), { key: a.apiKey });
      assert.equal(foreign.status, 404);
      assert.equal(foreign.body.error.code, 'credit_note_not_found');
    }
    // An invoice id is not a credit note id; a credit note is readable as an invoice (one store) but not changeable.
    assert.equal((await call(t.app, 'GET', `/v1/creditnotes/${bIssued.id}`, { key: b.apiKey })).body.error.code, 'credit_note_not_found');
    const asInvoice = await call(t.app, 'GET', `/v1/invoices/${bNote.id}`, { key: b.apiKey });
    assert.equal(asInvoice.status, 200);
    assert.equal(asInvoice.body.data.type, 'creditNote');
    assert.equal(asInvoice.body.data.balanceOere, asInvoice.body.data.grossOere + asInvoice.body.data.reminderFeeOere - asInvoice.body.data.paidOere - asInvoice.body.data.creditedOere);
    assert.equal(asInvoice.body.data.balanceOere, 0);
    for (const [method, url, body, code] of [
      ['PUT', `/v1/invoices/${bNote.id}`, { customerId: asInvoice.body.data.customerId, lines }, 'invoice_not_editable'],
      ['DELETE', `/v1/invoices/${bNote.id}`, undefined, 'invoice_not_editable'],
      ['POST', `/v1/invoices/${bNote.id}/issue`, undefined, 'invoice_not_editable'],
      ['POST', `/v1/invoices/${bNote.id}/credit`, { reason: 'x' }, 'invoice_not_creditable'],
      ['POST', `/v1/invoices/${bNote.id}/send`, undefined, 'credit_note_not_sendable'],
    ] as const) {
      const res = await call(t.app, method, url, { key: b.apiKey, body });
      assert.equal(res.status, 422, `${method} ${url}`);
      assert.equal(res.body.error.code, code);
    }
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/invoices/${bNote.id}/pdf`, headers: { authorization: `Bearer ${b.apiKey}` } })).statusCode, 200);
    assert.deepEqual((await call(t.app, 'GET', '/v1/invoices', { key: a.apiKey })).body.data.filter((i: { id: string }) => i.id === bIssued.id), []);
    assert.deepEqual((await call(t.app, 'GET', '/v1/creditnotes', { key: a.apiKey })).body.data, []);
    const [row] = await testDb().db.sql<{ status: string }[]>`SELECT status FROM invoices WHERE id = ${bIssued.id}`;
    assert.equal(row!.status, 'issued');
  });

  it('a stored PDF that no longer matches its hash is never served: 500 and an alert in the log', async () => {
    const inv = (await call(t.app, 'POST', '/v1/invoices?issue=true', { key: a.apiKey, body: { customerId: aCustomer, lines } })).body.data;
    const { sql } = testDb().db;
    // The store refuses UPDATE; a corrupted copy can only appear by pointing the invoice at other bytes' row with a
    // forged hash, which is what a damaged disk or a restored wrong backup amounts to.
    const forged = Buffer.alloc(32, 0xab);
    await sql`INSERT INTO documents (sha256, organization_id, content_type, size_bytes, content)
              VALUES (${forged}, ${a.organizationId}, 'application/pdf', 5, ${Buffer.from('%PDF-')})`;
    await sql`UPDATE invoices SET document_sha256 = ${forged} WHERE id = ${inv.id}`;
    const res = await call(t.app, 'GET', `/v1/invoices/${inv.id}/pdf`, { key: a.apiKey });
    assert.equal(res.status, 500);
    assert.equal(res.body.error.code, 'internal_error');
    assert.ok(!res.raw.includes('%PDF'));
    assert.match(t.logs(), /ALERT: stored document failed its integrity check/);
  });
});
