import assert from 'node:assert/strict';
import { inProcessOnly, call, createTestKey, createTestOrg, newIdempotencyKey, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { copenhagenToday } from '../../services/shared/clock.ts';

const line = (oere: number) => ({ description: 'Konsulentydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

describe('POST /v1/batch', () => {
  let t: TestApp;
  let org: TestOrg;
  let customerId: string;
  let crashAfter: number | undefined;
  const today = () => copenhagenToday(new Date());
  const sql = () => testDb().db.sql;
  const batch = (operations: unknown, opts: { key?: string; idempotencyKey?: string } = {}) =>
    call(t.app, 'POST', '/v1/batch', { key: opts.key ?? org.apiKey, body: { operations }, ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}) });
  const issued = async (grossOere: number) => {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines: [line(grossOere)] } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data as { id: string };
  };
  const payments = async (invoiceId: string) => (await sql()<{ booking_key: string; amount_oere: number }[]>`
    SELECT booking_key, amount_oere FROM payments WHERE invoice_id = ${invoiceId} ORDER BY booking_key`).map((r) => ({ ...r }));

  before(async () => {
    t = await startTestApp(inProcessOnly({
      afterBatchOperation: (index) => {
        if (crashAfter !== undefined && index === crashAfter) throw new Error('injected crash');
      },
    }));
    org = await createTestOrg({ name: 'Batch ApS' });
    customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
  });
  after(() => t.close());

  it('runs every operation in order and answers each with the status and body of its single call @cluster', async () => {
    const inv = await issued(50_000);
    const res = await batch([
      { op: 'customer.create', params: { type: 'person', name: 'Ida' } },
      { op: 'invoice.create', params: { customerId, lines: [line(10_000)], issue: true } },
      { op: 'payment.register', params: { invoiceId: inv.id, amountOere: 20_000, paymentDate: today() } },
      { op: 'invoice.create', params: { customerId, lines: [line(7_000)] } },
    ]);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.meta, {});
    const [c, i, p, d] = res.body.data.results;
    assert.deepEqual(res.body.data.results.map((r: { index: number; op: string; status: number }) => [r.index, r.op, r.status]), [
      [0, 'customer.create', 201], [1, 'invoice.create', 201], [2, 'payment.register', 201], [3, 'invoice.create', 201],
    ]);
    const single = await call(t.app, 'GET', `/v1/customers/${c.data.id}`, { key: org.apiKey });
    assert.deepEqual(c.data, single.body.data);
    assert.equal(c.data.name, 'Ida');
    assert.equal(i.data.status, 'issued');
    assert.equal(typeof i.data.number, 'number');
    assert.equal(d.data.status, 'draft');
    assert.equal(p.data.id, inv.id);
    assert.equal(p.data.balanceOere, 30_000);
    assert.equal(p.meta.outcome, 'partial');
    assert.equal(typeof p.meta.paymentId, 'string');
    assert.equal(c.error, undefined);
  });

  it('fails a wrong operation alone, with the 400 of its single call (same message and pointers)', async () => {
    const bad = { type: 'robot', name: '', extra: 1 };
    const single = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: bad });
    assert.equal(single.status, 400);
    const singlePayment = await call(t.app, 'POST', `/v1/invoices/${customerId}/payments`, { key: org.apiKey, body: { amountOere: 0, paymentDate: '2026-02-30' } });
    const res = await batch([
      { op: 'customer.create', params: bad },
      { op: 'customer.delete', params: {} },
      { params: {} },
      { op: 'customer.create' },
      { op: 'payment.register', params: { amountOere: 0, paymentDate: '2026-02-30' } },
      { op: 'invoice.create', params: { customerId, lines: [line(1)], issue: 'yes' } },
      { op: 'invoice.create', params: { lines: [line(1)] } },
      { op: 'customer.create', params: { type: 'person', name: 'Ok' }, extra: true },
      { op: 'customer.create', params: { type: 'person', name: 'Ok' } },
    ]);
    assert.equal(res.status, 200, res.raw);
    const r = res.body.data.results;
    assert.deepEqual(r.map((x: { status: number }) => x.status), [400, 400, 400, 400, 400, 400, 400, 400, 201]);
    for (const x of r.slice(0, 8)) assert.equal(x.error.code, 'validation_failed');
    assert.equal(r[0].error.message, single.body.error.message);
    assert.deepEqual(r[0].error.details, single.body.error.details);
    assert.equal(r[0].error.requestId, res.headers['request-id']);
    assert.deepEqual(r[1].error.details, [{ path: '/op', message: 'must be one of: customer.create, invoice.create, payment.register' }]);
    assert.equal(r[1].op, 'customer.delete');
    assert.deepEqual(r[2].error.details, [{ path: '/op', message: 'is required' }]);
    assert.equal(r[2].op, null);
    assert.deepEqual(r[3].error.details, single.body.error.details.length ? [{ path: '', message: 'must be object' }] : []);
    // The path's invoiceId is a property here; the rest is the single call's body, with its messages and pointers.
    assert.deepEqual(r[4].error.details, [{ path: '/invoiceId', message: 'is required' }, ...singlePayment.body.error.details]);
    assert.deepEqual(r[5].error.details, [{ path: '/issue', message: 'must be boolean' }]);
    assert.deepEqual(r[6].error.details, [{ path: '/customerId', message: 'exactly one of customerId and customer is required' }]);
    assert.deepEqual(r[7].error.details, [{ path: '/extra', message: 'is not an allowed property' }]);
  });

  it('refuses the batch as a whole only when operations is not an array of 1..100 objects', async () => {
    const op = { op: 'customer.create', params: { type: 'person', name: 'X' } };
    for (const body of [{ operations: [] }, { operations: Array(101).fill(op) }, { operations: [op, 1] }, {}, { operations: op }, { operations: [op], x: 1 }]) {
      const res = await call(t.app, 'POST', '/v1/batch', { key: org.apiKey, body });
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(res.body.error.code, 'validation_failed');
    }
    const ok = await batch(Array(100).fill(op));
    assert.equal(ok.status, 200);
    assert.equal(ok.body.data.results.length, 100);
  });

  it('checks each operation\'s scope: a missing one fails that operation with 403', async () => {
    const key = await createTestKey(org, ['customers:write']);
    const inv = await issued(1_000);
    const res = await batch([
      { op: 'customer.create', params: { type: 'person', name: 'Scoped' } },
      { op: 'invoice.create', params: { customerId, lines: [line(1)] } },
      { op: 'payment.register', params: { invoiceId: inv.id, amountOere: 1, paymentDate: today() } },
    ], { key });
    assert.equal(res.status, 200, res.raw);
    const r = res.body.data.results;
    assert.deepEqual(r.map((x: { status: number }) => x.status), [201, 403, 403]);
    assert.equal(r[1].error.code, 'insufficient_scope');
    assert.deepEqual(r[2].error.details, [{ path: '', message: 'required scope: payments:write' }]);
    const inline = await batch([{ op: 'invoice.create', params: { customer: { type: 'person', name: 'Inline' }, lines: [line(1)] } }], {
      key: await createTestKey(org, ['invoices:write']),
    });
    assert.equal(inline.body.data.results[0].status, 403);
    assert.deepEqual(inline.body.data.results[0].error.details, [{ path: '/customer', message: 'required scope: customers:write' }]);
  });

  it('needs a key and an Idempotency-Key; a body over 1 MiB is 413', async () => {
    const op = [{ op: 'customer.create', params: { type: 'person', name: 'X' } }];
    assert.equal((await call(t.app, 'POST', '/v1/batch', { body: { operations: op } })).status, 401);
    const noKey = await call(t.app, 'POST', '/v1/batch', { key: org.apiKey, body: { operations: op }, idempotencyKey: null });
    assert.equal(noKey.body.error.code, 'idempotency_key_missing');
    const big = await batch([{ op: 'customer.create', params: { type: 'person', name: 'X', metadata: { a: 'x'.repeat(1024 * 1024) } } }]);
    assert.equal(big.status, 413);
    assert.equal(big.body.error.code, 'payload_too_large');
  });

  it('replays the whole batch on its key, and books each payment on <key>:<index> @cluster', async () => {
    const inv = await issued(100_000);
    const key = newIdempotencyKey();
    const ops = [
      { op: 'customer.create', params: { type: 'person', name: 'Replay' } },
      { op: 'payment.register', params: { invoiceId: inv.id, amountOere: 10_000, paymentDate: today() } },
      { op: 'payment.register', params: { invoiceId: inv.id, amountOere: 0, paymentDate: today() } },
    ];
    const first = await batch(ops, { idempotencyKey: key });
    assert.equal(first.status, 200, first.raw);
    const again = await batch(ops, { idempotencyKey: key });
    assert.equal(again.status, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    // The same results; a failed operation's error echoes the replay's own Request-Id, as a replayed single call's does.
    assert.equal(first.body.data.results[2].error.requestId, first.headers['request-id']);
    assert.equal(again.body.data.results[2].error.requestId, again.headers['request-id']);
    assert.notEqual(again.headers['request-id'], first.headers['request-id']);
    const withId = (results: { error?: { requestId: string } }[], id: string) =>
      results.map((r) => (r.error ? { ...r, error: { ...r.error, requestId: id } } : r));
    assert.deepEqual(again.body, { data: { results: withId(first.body.data.results, again.headers['request-id'] as string) }, meta: { replayed: true } });
    const other = await batch(ops.slice(0, 1), { idempotencyKey: key });
    assert.equal(other.status, 409);
    assert.equal(other.body.error.code, 'idempotency_conflict');
    assert.deepEqual(await payments(inv.id), [{ booking_key: `${key}:1`, amount_oere: 10_000 }]);
    // A single call with the operation's key is a replay of the payment the batch booked.
    const single = await call(t.app, 'POST', `/v1/invoices/${inv.id}/payments`, {
      key: org.apiKey, idempotencyKey: `${key}:1`, body: { amountOere: 10_000, paymentDate: today() },
    });
    assert.equal(single.status, 201);
    assert.equal(single.headers['idempotent-replayed'], 'true');
    assert.equal(single.body.meta.paymentId, first.body.data.results[1].meta.paymentId);
    // A new batch under another key whose operation keys differ books anew; the first one's keys never book twice.
    const conflicting = await call(t.app, 'POST', `/v1/invoices/${inv.id}/payments`, {
      key: org.apiKey, idempotencyKey: `${key}:1`, body: { amountOere: 999, paymentDate: today() },
    });
    assert.equal(conflicting.status, 409);
    assert.equal((await payments(inv.id)).length, 1);
  });

  it('after a crash midway, a retry with the same key runs the rest and books nothing twice', async () => {
    const inv = await issued(100_000);
    const key = newIdempotencyKey();
    const ops = [
      { op: 'payment.register', params: { invoiceId: inv.id, amountOere: 1_000, paymentDate: today() } },
      { op: 'customer.create', params: { type: 'person', name: `Crash ${key}` } },
      { op: 'payment.register', params: { invoiceId: inv.id, amountOere: 2_000, paymentDate: today() } },
      { op: 'customer.create', params: { type: 'person', name: `Crash ${key}` } },
    ];
    crashAfter = 1;
    const crashed = await batch(ops, { idempotencyKey: key });
    crashAfter = undefined;
    assert.equal(crashed.status, 500);
    assert.deepEqual(await payments(inv.id), [{ booking_key: `${key}:0`, amount_oere: 1_000 }]);
    const retried = await batch(ops, { idempotencyKey: key });
    assert.equal(retried.status, 200, retried.raw);
    assert.deepEqual(retried.body.data.results.map((r: { status: number }) => r.status), [201, 201, 201, 201]);
    assert.deepEqual(await payments(inv.id), [
      { booking_key: `${key}:0`, amount_oere: 1_000 },
      { booking_key: `${key}:2`, amount_oere: 2_000 },
    ]);
    const [row] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM customers WHERE organization_id = ${org.organizationId} AND name = ${`Crash ${key}`}`;
    assert.equal(row?.n, 2);
    assert.equal(retried.body.data.results[2].data.balanceOere, 97_000);
    assert.equal(retried.body.data.results[0].meta.paymentId, (await batch(ops, { idempotencyKey: key })).body.data.results[0].meta.paymentId);
  });
});
