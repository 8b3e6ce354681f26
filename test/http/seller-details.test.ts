import assert from 'node:assert/strict';
import { recordFailure } from '../../activities/invoices/deliver-invoice-mail.ts';
import { call, createTestOrg, newIdempotencyKey, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/**
 * Momsbekendtgørelsen § 58: every invoice and credit note shows the seller's name, address and CVR. Without them an
 * organisation cannot issue (422 seller_details_incomplete, each missing field named), and a refusal uses nothing:
 * no number, no invoice, no stored answer under the key.
 */
describe('seller details required to issue', () => {
  let t: TestApp;
  const sql = () => testDb().db.sql;
  const lines = [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4500 }];
  const FIELDS = { name: 'name', street: 'street', postalCode: 'postal_code', city: 'city', cvr: 'cvr' } as const;
  const COMPLETE = { name: 'Bager Hansen ApS', street: 'Nørregade 1', postal_code: '8000', city: 'Aarhus C', cvr: '12345678' };

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const customer = async (org: TestOrg): Promise<string> =>
    (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
  const setSeller = (org: TestOrg, columns: Record<string, string | null>) =>
    sql()`UPDATE organizations SET ${sql()(columns)} WHERE id = ${org.organizationId}`;
  const counts = async (org: TestOrg) => {
    const [row] = await sql()<{ invoices: number; numbers: number | null; keys: number }[]>`
      SELECT (SELECT count(*)::int FROM invoices WHERE organization_id = ${org.organizationId}) AS invoices,
             (SELECT next_number FROM number_series WHERE organization_id = ${org.organizationId}) AS numbers,
             (SELECT count(*)::int FROM idempotency_keys WHERE organization_id = ${org.organizationId}) AS keys`;
    return { ...row! };
  };
  const assertRefused = (res: Awaited<ReturnType<typeof call>>, paths: string[]) => {
    assert.equal(res.status, 422, res.raw);
    assert.equal(res.body.error.code, 'seller_details_incomplete');
    assert.match(res.body.error.message, /Momsbekendtgørelsen § 58/);
    assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), paths);
    for (const d of res.body.error.details) assert.match(d.message, /npm run admin -- update-org --org ID --[a-z-]+ /);
  };

  it('POST /v1/invoices?issue=true names every missing field, creates nothing, and keeps the key free @cluster', async () => {
    const org = await createTestOrg({ name: 'Kun Navn ApS', cvr: undefined, street: undefined, postalCode: undefined, city: undefined });
    const customerId = await customer(org);
    const before = await counts(org);
    const key = newIdempotencyKey();
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines }, idempotencyKey: key });
    assertRefused(res, ['/seller/street', '/seller/postalCode', '/seller/city', '/seller/cvr']);
    assert.deepEqual(await counts(org), before);
    assert.equal(before.numbers, null, 'no number series started');

    // The operator sets the details; the same request with the same key now issues number 1.
    await setSeller(org, { street: 'Nørregade 1', postal_code: '8000', city: 'Aarhus C', cvr: '12345678' });
    const retry = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines }, idempotencyKey: key });
    assert.equal(retry.status, 201, retry.raw);
    assert.equal(retry.headers['idempotent-replayed'], undefined);
    assert.equal(retry.body.data.number, 1);
  });

  for (const [field, column] of Object.entries(FIELDS)) {
    it(`POST …/issue without the seller's ${field} is 422 at /seller/${field}; the draft stays a draft and the series goes on without a gap`, async () => {
      const org = await createTestOrg();
      const customerId = await customer(org);
      const first = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines } });
      assert.equal(first.body.data.number, 1);
      const draft = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines } })).body.data;

      await setSeller(org, { [column]: field === 'name' ? '  ' : null });
      const before = await counts(org);
      assertRefused(await call(t.app, 'POST', `/v1/invoices/${draft.id}/issue`, { key: org.apiKey }), [`/seller/${field}`]);
      assert.deepEqual(await counts(org), before);
      const still = (await call(t.app, 'GET', `/v1/invoices/${draft.id}`, { key: org.apiKey })).body.data;
      assert.deepEqual([still.status, still.number], ['draft', null]);

      await setSeller(org, { [column]: COMPLETE[column] });
      const issued = await call(t.app, 'POST', `/v1/invoices/${draft.id}/issue`, { key: org.apiKey });
      assert.equal(issued.status, 200, issued.raw);
      assert.equal(issued.body.data.number, 2);
    });
  }

  it('a credit note needs them too: 422 without the CVR, the invoice not credited, no number used', async () => {
    const org = await createTestOrg();
    const customerId = await customer(org);
    const inv = (await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines } })).body.data;
    await setSeller(org, { cvr: null });
    const before = await counts(org);
    assertRefused(await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: org.apiKey, body: { reason: 'Fejl' } }), ['/seller/cvr']);
    assert.deepEqual(await counts(org), before);
    assert.equal((await call(t.app, 'GET', `/v1/invoices/${inv.id}`, { key: org.apiKey })).body.data.creditedOere, 0);
    await setSeller(org, { cvr: '12345678' });
    const note = await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: org.apiKey, body: { reason: 'Fejl' } });
    assert.equal(note.status, 201, note.raw);
    assert.equal(note.body.data.number, inv.number + 1);
  });
});

/** `meta.send` and `data.sentAt` of one answer agree: "sent" comes with the moment, "failed" without one. */
describe('sending: meta.send and sentAt', () => {
  let t: TestApp;
  let org: TestOrg;
  const lines = [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4500 }];

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
  });
  after(() => t.close());

  const customer = async (email: string | null): Promise<string> =>
    (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S', email } })).body.data.id;

  it('?send=true and POST …/send answer status "sent" with data.sentAt set, as later reads show it @cluster', async () => {
    const created = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer('ap@kunde.dk'), lines } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.meta, { send: { status: 'sent', channel: 'email' } });
    assert.match(String(created.body.data.sentAt), /^\d{4}-\d\d-\d\dT/);
    const read = (await call(t.app, 'GET', `/v1/invoices/${created.body.data.id}`, { key: org.apiKey })).body.data;
    assert.equal(read.sentAt, created.body.data.sentAt);

    const issued = (await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId: await customer('b@kunde.dk'), lines } })).body.data;
    assert.equal(issued.sentAt, null);
    const sent = await call(t.app, 'POST', `/v1/invoices/${issued.id}/send`, { key: org.apiKey });
    assert.equal(sent.status, 200);
    assert.deepEqual(sent.body.meta, { send: { status: 'sent', channel: 'email' } });
    assert.notEqual(sent.body.data.sentAt, null);
    // A second send mails nothing and answers as the first did, with the same moment.
    const again = await call(t.app, 'POST', `/v1/invoices/${issued.id}/send`, { key: org.apiKey });
    assert.deepEqual(again.body.meta, { send: { status: 'sent', channel: 'email' } });
    assert.equal(again.body.data.sentAt, sent.body.data.sentAt);
  });

  it('status "failed" (no e-mail address) leaves sentAt null', async () => {
    const res = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer(null), lines } });
    assert.deepEqual(res.body.meta, { send: { status: 'failed', code: 'customer_email_missing', channel: 'email' } });
    assert.equal(res.body.data.sentAt, null);
  });

  it('a mail that finally fails clears sentAt again; a new send sets it anew', async () => {
    const res = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: await customer('reject@kunde.dk'), lines } });
    const id = res.body.data.id as string;
    assert.notEqual(res.body.data.sentAt, null);
    await recordFailure({ db: testDb().db }, org.organizationId, id, 'mail_rejected', '550 no such user', 550);
    const failed = (await call(t.app, 'GET', `/v1/invoices/${id}`, { key: org.apiKey })).body.data;
    assert.equal(failed.sentAt, null);
    const codes = (await call(t.app, 'GET', `/v1/invoices/${id}/timeline`, { key: org.apiKey })).body.data.map((x: { code: string }) => x.code);
    assert.deepEqual(codes, ['created', 'issued', 'send_failed']);
    const retry = await call(t.app, 'POST', `/v1/invoices/${id}/send`, { key: org.apiKey });
    assert.deepEqual(retry.body.meta, { send: { status: 'sent', channel: 'email' } });
    assert.notEqual(retry.body.data.sentAt, null);
  });
});
