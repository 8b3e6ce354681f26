import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { CROCKFORD, formatPaymentCode, newPaymentCode, normalizePaymentCode } from '../../services/payments/payment-links.ts';

const line = (oere: number) => ({ description: 'Konsulentydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });
const LINK_FIELDS = ['createdAt', 'invoiceId', 'paymentCode', 'reference', 'url'];

describe('payment links: GET/POST /v1/invoices/{id}/payment-link', () => {
  let t: TestApp;
  let org: TestOrg;
  let customerId: string;
  const BASE = 'https://betal.example.dk';

  const invoice = async (issue: boolean, o: TestOrg = org, c: string = customerId) => {
    const res = await call(t.app, 'POST', `/v1/invoices${issue ? '?issue=true' : ''}`, { key: o.apiKey, body: { customerId: c, lines: [line(12_500)] } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data.id as string;
  };

  before(async () => {
    t = await startTestApp({ payBaseUrl: BASE });
    org = await createTestOrg({ name: 'Link ApS' });
    customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
  });
  after(() => t.close());

  it('POST creates the link (200), GET and further POSTs answer with the very same link', async () => {
    const id = await invoice(true);
    const created = await call(t.app, 'POST', `/v1/invoices/${id}/payment-link`, { key: org.apiKey });
    assert.equal(created.status, 200, created.raw);
    assert.deepEqual(Object.keys(created.body.data).sort(), LINK_FIELDS);
    const link = created.body.data;
    assert.equal(link.invoiceId, id);
    assert.match(link.reference, /^[0-9a-f]{32}$/);
    assert.match(link.paymentCode, /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    assert.equal(link.url, `${BASE}/p/${link.reference}`);
    assert.deepEqual(created.body.meta, {});

    const read = await call(t.app, 'GET', `/v1/invoices/${id}/payment-link`, { key: org.apiKey });
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, { data: link, meta: {} });
    const again = await call(t.app, 'POST', `/v1/invoices/${id}/payment-link`, { key: org.apiKey });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.data, link);
    const [rows] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM payment_links WHERE invoice_id = ${id}`;
    assert.equal(rows!.n, 1);
  });

  it('GET first creates the link too, and concurrent first requests agree on one link @cluster', async () => {
    const id = await invoice(true);
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => call(t.app, 'GET', `/v1/invoices/${id}/payment-link`, { key: org.apiKey })),
      ...Array.from({ length: 5 }, () => call(t.app, 'POST', `/v1/invoices/${id}/payment-link`, { key: org.apiKey })),
    ]);
    for (const a of answers) assert.equal(a.status, 200, a.raw);
    assert.equal(new Set(answers.map((a) => JSON.stringify(a.body.data))).size, 1);
    const [rows] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM payment_links WHERE invoice_id = ${id}`;
    assert.equal(rows!.n, 1);
  });

  it('a replayed POST (same Idempotency-Key) answers the stored link with meta.replayed', async () => {
    const id = await invoice(true);
    const key = `link-${Date.now()}`;
    const first = await call(t.app, 'POST', `/v1/invoices/${id}/payment-link`, { key: org.apiKey, idempotencyKey: key });
    const second = await call(t.app, 'POST', `/v1/invoices/${id}/payment-link`, { key: org.apiKey, idempotencyKey: key });
    assert.equal(second.status, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.body, { data: first.body.data, meta: { replayed: true } });
  });

  it('each invoice has its own reference and code', async () => {
    const links = [];
    for (let i = 0; i < 5; i++) links.push((await call(t.app, 'GET', `/v1/invoices/${await invoice(true)}/payment-link`, { key: org.apiKey })).body.data);
    assert.equal(new Set(links.map((l) => l.reference)).size, 5);
    assert.equal(new Set(links.map((l) => l.paymentCode)).size, 5);
  });

  it('a draft has no payment link: 422 invoice_not_issued on GET and POST, and none is created', async () => {
    const id = await invoice(false);
    for (const method of ['GET', 'POST']) {
      const res = await call(t.app, method, `/v1/invoices/${id}/payment-link`, { key: org.apiKey });
      assert.equal(res.status, 422, method);
      assert.equal(res.body.error.code, 'invoice_not_issued');
    }
    const [rows] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM payment_links WHERE invoice_id = ${id}`;
    assert.equal(rows!.n, 0);
  });

  it('a credit note has no payment link: 422 credit_note_not_payable', async () => {
    const id = await invoice(true);
    const credit = await call(t.app, 'POST', `/v1/invoices/${id}/credit`, { key: org.apiKey, body: { reason: 'Fejl' } });
    assert.equal(credit.status, 201, credit.raw);
    const res = await call(t.app, 'GET', `/v1/invoices/${credit.body.data.id}/payment-link`, { key: org.apiKey });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'credit_note_not_payable');
  });

  it('unknown, malformed and other organisations\' invoices are 404 invoice_not_found', async () => {
    const other = await createTestOrg({ name: 'Anden ApS' });
    const otherCustomer = (await call(t.app, 'POST', '/v1/customers', { key: other.apiKey, body: { type: 'company', name: 'X' } })).body.data.id;
    const foreign = await invoice(true, other, otherCustomer);
    for (const id of [foreign, '0190a0a0-0000-7000-8000-000000000000', 'not-a-uuid']) {
      for (const method of ['GET', 'POST']) {
        const res = await call(t.app, method, `/v1/invoices/${id}/payment-link`, { key: org.apiKey });
        assert.equal(res.status, 404, `${method} ${id}`);
        assert.equal(res.body.error.code, 'invoice_not_found');
      }
    }
  });

  it('needs payments:read to read and payments:write to create', async () => {
    const id = await invoice(true);
    const reader = await createTestKey(org, ['payments:read']);
    const writerless = await call(t.app, 'POST', `/v1/invoices/${id}/payment-link`, { key: reader });
    assert.equal(writerless.status, 403);
    assert.equal(writerless.body.error.code, 'insufficient_scope');
    const invoicesOnly = await createTestKey(org, ['invoices:read']);
    const readless = await call(t.app, 'GET', `/v1/invoices/${id}/payment-link`, { key: invoicesOnly });
    assert.equal(readless.status, 403);
    assert.equal((await call(t.app, 'GET', `/v1/invoices/${id}/payment-link`, { key: reader })).status, 200);
  });

  it('without PAY_BASE_URL the link points at the pay service\'s own loopback address', async () => {
    const plain = await startTestApp();
    try {
      const id = await invoice(true);
      const res = await call(plain.app, 'GET', `/v1/invoices/${id}/payment-link`, { key: org.apiKey });
      assert.equal(res.body.data.url, `http://127.0.0.1:3001/p/${res.body.data.reference}`);
    } finally {
      await plain.close();
    }
  });
});

describe('payment codes', () => {
  it('are 8 Crockford base32 characters drawn evenly', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const code = newPaymentCode();
      assert.match(code, /^[0-9A-HJKMNP-TV-Z]{8}$/);
      for (const c of code) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    // 32 000 characters over 32 symbols: 1000 each on average; every symbol appears and none dominates.
    assert.equal(counts.size, 32);
    for (const c of CROCKFORD) assert.ok(counts.get(c)! > 800 && counts.get(c)! < 1200, `${c}: ${counts.get(c)}`);
  });

  it('are read in any case, with or without the hyphen or spaces, with O as 0 and I/L as 1', () => {
    assert.equal(formatPaymentCode('ABCD1234'), 'ABCD-1234');
    assert.equal(normalizePaymentCode('ABCD-1234'), 'ABCD1234');
    assert.equal(normalizePaymentCode(' abcd 1234 '), 'ABCD1234');
    assert.equal(normalizePaymentCode('o0il-LIo0'), '0011-1100'.replace('-', ''));
    assert.equal(normalizePaymentCode('ABCD-123'), undefined);
    assert.equal(normalizePaymentCode('ABCD-123U'), undefined, 'U is not in the alphabet');
    assert.equal(normalizePaymentCode('ABCD-12345'), undefined);
  });
});
