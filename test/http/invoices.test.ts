import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { copenhagenToday, addDays } from '../../services/shared/clock.ts';

const pdfText = (bytes: Buffer): string => execFileSync('pdftotext', ['-layout', '-', '-'], { input: bytes }).toString('utf8');

describe('invoices', () => {
  let t: TestApp;
  let org: TestOrg;
  let customerId: string;
  const lines = [
    { description: 'Rugbrød', quantity: 3, unitPriceOere: 4500, vatRateBps: 2500 },
    { description: 'Kursus', quantity: 1.5, unitPriceOere: 100000, vatRateBps: 0, vatExemptionReason: 'ML13', discount: { type: 'percent', value: 10 } },
  ];

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({
      name: 'Bager Hansen ApS', cvr: '12345678', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C',
      email: 'regnskab@bager.dk', bankReg: '1234', bankAccount: '0001234567',
    });
    customerId = (await call(t.app, 'POST', '/v1/customers', {
      key: org.apiKey,
      body: { type: 'company', name: 'Kunde A/S', cvr: '87654321', address: { street: 'Vestergade 2', postalCode: '5000', city: 'Odense C' }, email: 'ap@kunde.dk' },
    })).body.data.id;
  });
  after(() => t.close());

  it('creates a draft with computed lines and totals, 201 + Location', async () => {
    const res = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines, heading: 'Leverance' } });
    assert.equal(res.status, 201);
    const inv = res.body.data;
    assert.equal(res.headers.location, `/v1/invoices/${inv.id}`);
    assert.equal(inv.status, 'draft');
    assert.equal(inv.number, null);
    assert.equal(inv.type, 'invoice');
    assert.deepEqual(inv.lines.map((l: { netOere: number; vatOere: number }) => [l.netOere, l.vatOere]), [[13500, 3375], [135000, 0]]);
    assert.deepEqual([inv.netOere, inv.vatOere, inv.grossOere, inv.balanceOere], [148500, 3375, 151875, 151875]);
    assert.deepEqual([inv.paidOere, inv.creditedOere, inv.reminderFeeOere], [0, 0, 0]);
    assert.equal(inv.lines[1].quantity, 1.5);
    assert.deepEqual(inv.lines[1].discount, { type: 'percent', value: 10 });
  });

  it('issues with ?issue=true: number, dates and a locked PDF whose hash is served as ETag @cluster', async () => {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines, paymentTermsDays: 8 } });
    assert.equal(res.status, 201);
    const inv = res.body.data;
    assert.equal(inv.status, 'issued');
    assert.equal(typeof inv.number, 'number');
    const today = copenhagenToday(new Date());
    assert.equal(inv.issueDate, today);
    assert.equal(inv.dueDate, addDays(today, 8));
    const pdf = await t.app.inject({ method: 'GET', url: `/v1/invoices/${inv.id}/pdf`, headers: { authorization: `Bearer ${org.apiKey}` } });
    assert.equal(pdf.statusCode, 200);
    assert.equal(pdf.headers['content-type'], 'application/pdf');
    const sha = createHash('sha256').update(pdf.rawPayload).digest('hex');
    assert.equal(pdf.headers.etag, `"${sha}"`);
    const [row] = await testDb().db.sql<{ document_sha256: Buffer }[]>`SELECT document_sha256 FROM invoices WHERE id = ${inv.id}`;
    assert.equal(row!.document_sha256.toString('hex'), sha);
    const text = pdfText(pdf.rawPayload);
    for (const needle of [String(inv.number), 'Bager Hansen ApS', '12345678', 'Kunde A/S', 'Momsfritaget, jf. momslovens § 13', '1234']) {
      assert.ok(text.includes(needle), `PDF lacks ${needle}`);
    }
  });

  it('numbers 50 concurrent issues exactly 1..50 with no gap or duplicate @cluster', async () => {
    const fresh = await createTestOrg();
    const c = (await call(t.app, 'POST', '/v1/customers', { key: fresh.apiKey, body: { type: 'person', name: 'P' } })).body.data.id;
    const drafts = await Promise.all(
      Array.from({ length: 50 }, () => call(t.app, 'POST', '/v1/invoices', { key: fresh.apiKey, body: { customerId: c, lines: [lines[0]] } })),
    );
    const issued = await Promise.all(drafts.map((d) => call(t.app, 'POST', `/v1/invoices/${d.body.data.id}/issue`, { key: fresh.apiKey })));
    assert.deepEqual(issued.map((r) => r.status), Array(50).fill(200));
    assert.deepEqual(issued.map((r) => r.body.data.number).sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it('PUT and DELETE only drafts; issuing twice is invoice_not_editable; PDF of a draft is invoice_not_issued', async () => {
    const draft = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines } })).body.data;
    const pdf = await call(t.app, 'GET', `/v1/invoices/${draft.id}/pdf`, { key: org.apiKey });
    assert.equal(pdf.status, 422);
    assert.equal(pdf.body.error.code, 'invoice_not_issued');
    const put = await call(t.app, 'PUT', `/v1/invoices/${draft.id}`, { key: org.apiKey, body: { customerId, lines: [lines[0]] } });
    assert.equal(put.status, 200);
    assert.equal(put.body.data.grossOere, 16875);
    assert.equal(put.body.data.heading, null);
    const issued = await call(t.app, 'POST', `/v1/invoices/${draft.id}/issue`, { key: org.apiKey, body: {} });
    assert.equal(issued.status, 200);
    for (const [method, url, body] of [
      ['PUT', `/v1/invoices/${draft.id}`, { customerId, lines }],
      ['DELETE', `/v1/invoices/${draft.id}`, undefined],
      ['POST', `/v1/invoices/${draft.id}/issue`, undefined],
    ] as const) {
      const res = await call(t.app, method, url, { key: org.apiKey, body });
      assert.equal(res.status, 422, `${method} ${url}`);
      assert.equal(res.body.error.code, 'invoice_not_editable');
    }
    const other = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines } })).body.data;
    const del = await call(t.app, 'DELETE', `/v1/invoices/${other.id}`, { key: org.apiKey });
    assert.equal(del.status, 204);
    assert.equal((await call(t.app, 'GET', `/v1/invoices/${other.id}`, { key: org.apiKey })).status, 404);
  });

  it('credits an issued invoice once, with a numbered credit note and an updated balance', async () => {
    const body = { customerId, lines, heading: 'Levering uge 47', message: 'Tak for handlen' };
    const inv = (await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body })).body.data;
    const res = await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: org.apiKey, body: { reason: 'Fejlleverance' } });
    assert.equal(res.status, 201);
    const note = res.body.data;
    assert.equal(res.headers.location, `/v1/creditnotes/${note.id}`);
    assert.equal(note.type, 'creditNote');
    assert.equal(note.creditsInvoiceId, inv.id);
    assert.equal(note.number, inv.number + 1);
    assert.equal(note.grossOere, inv.grossOere);
    // The credit note's record says what its document prints: the original's heading and message.
    assert.deepEqual([note.heading, note.message], ['Levering uge 47', 'Tak for handlen']);
    const after = (await call(t.app, 'GET', `/v1/invoices/${inv.id}`, { key: org.apiKey })).body.data;
    assert.equal(after.creditedOere, inv.grossOere);
    assert.equal(after.balanceOere, 0);
    assert.equal(after.status, 'issued');
    const again = await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: org.apiKey, body: { reason: 'Igen' } });
    assert.equal(again.status, 422);
    assert.equal(again.body.error.code, 'invoice_not_creditable');
    const pdf = await t.app.inject({ method: 'GET', url: `/v1/creditnotes/${note.id}/pdf`, headers: { authorization: `Bearer ${org.apiKey}` } });
    assert.equal(pdf.statusCode, 200);
    const text = pdfText(pdf.rawPayload);
    assert.ok(text.includes(String(inv.number)), 'credit note names the original number');
    assert.ok(text.includes('Levering uge 47') && text.includes('Tak for handlen'), 'and prints the heading and message its record holds');
    const list = await call(t.app, 'GET', `/v1/creditnotes?customerId=${customerId}`, { key: org.apiKey });
    assert.ok(list.body.data.some((n: { id: string }) => n.id === note.id));
    const timeline = await call(t.app, 'GET', `/v1/invoices/${inv.id}/timeline`, { key: org.apiKey });
    assert.deepEqual(timeline.body.data.map((i: { code: string }) => i.code), ['created', 'issued', 'credited']);
    assert.equal(timeline.body.meta.nextCursor, null);
    // The credit note has a story of its own: made and issued in one step.
    const noteTimeline = await call(t.app, 'GET', `/v1/invoices/${note.id}/timeline`, { key: org.apiKey });
    assert.deepEqual(noteTimeline.body.data.map((i: { code: string; data: unknown }) => [i.code, i.data]), [['created', {}], ['issued', { number: note.number }]]);
    // Cursor-paginated like every list, oldest first.
    const codes: string[] = [];
    let cursor: string | null = null;
    do {
      const url = `/v1/invoices/${inv.id}/timeline?limit=1${cursor ? `&cursor=${cursor}` : ''}`;
      const pageOf: { body: { data: { code: string }[]; meta: { nextCursor: string | null } } } = await call(t.app, 'GET', url, { key: org.apiKey });
      assert.equal(pageOf.body.data.length, 1);
      codes.push(pageOf.body.data[0]!.code);
      cursor = pageOf.body.meta.nextCursor;
    } while (cursor);
    assert.deepEqual(codes, ['created', 'issued', 'credited']);
    for (const bad of ['limit=0', 'limit=201', 'foo=1']) {
      const res = await call(t.app, 'GET', `/v1/invoices/${inv.id}/timeline?${bad}`, { key: org.apiKey });
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.error.code, 'validation_failed', bad);
    }
    const events = await testDb().db.sql<{ type: string; sekvensnummer: number }[]>`
      SELECT type, sekvensnummer FROM events WHERE entity_id = ${inv.id} ORDER BY sekvensnummer`;
    assert.deepEqual(events.map((e) => [e.type, e.sekvensnummer]), [['invoice.issued', 1], ['invoice.credited', 2]]);
  });

  it('finds or creates inline customers, never overwriting, and needs customers:write for it', async () => {
    const body = { customer: { type: 'company', name: 'Changed Name', cvr: '87654321' }, lines };
    const res = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.customerId, customerId);
    const c = (await call(t.app, 'GET', `/v1/customers/${customerId}`, { key: org.apiKey })).body.data;
    assert.equal(c.name, 'Kunde A/S');
    const invoicesOnly = await createTestKey(org, ['invoices:write']);
    const denied = await call(t.app, 'POST', '/v1/invoices', { key: invoicesOnly, body });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'insufficient_scope');
    const both = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { ...body, customerId } });
    assert.equal(both.status, 400);
    assert.equal(both.body.error.code, 'validation_failed');
    const neither = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { lines } });
    assert.equal(neither.status, 400);
    const foreign = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId: '0190a8a0-0000-7000-8000-000000000000', lines } });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.code, 'customer_not_found');
  });

  it('refuses invalid VAT with 422 and the line path', async () => {
    const res = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines: [{ ...lines[0], vatRateBps: 12000 }] } });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'invalid_vat_rate');
    assert.equal(res.body.error.details[0].path, '/lines/0/vatRateBps');
  });
});
