import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { bookPayment } from '../../services/payments/book-payment.ts';
import { settlementId } from '../../services/settlements/list-settlements.ts';
import { nextBusinessDay, settlementDay } from '../../services/settlements/settlement-fees.ts';

const line = (oere: number) => ({ description: 'Ydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

describe('GET /v1/settlements', () => {
  let t: TestApp;
  let org: TestOrg;
  let n = 0;
  const today = async (o: TestOrg) => t.deps.clock.today(o.organizationId);
  async function paid(o: TestOrg, source: 'card' | 'mobilepay' | 'manual', amountOere: number, paymentDate: string) {
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: o.apiKey, body: { type: 'person', name: 'K' } })).body.data.id;
    const inv = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: o.apiKey, body: { customerId, lines: [line(10_000_000)] } });
    assert.equal(inv.status, 201, inv.raw);
    await testDb().db.tx((tx) => bookPayment(tx, t.deps, o.organizationId, inv.body.data.id, { source, bookingKey: `k${++n}`, amountOere, paymentDate }));
  }
  const list = (o: TestOrg, query = '') => call(t.app, 'GET', `/v1/settlements${query}`, { key: o.apiKey });

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Udbetaling ApS' });
  });
  after(() => t.close());

  it('settles each business day\'s card and MobilePay payments on the next business day, fees per payment, newest first', async () => {
    await paid(org, 'card', 1_000, '2026-03-06'); // Friday
    await paid(org, 'card', 1_000, '2026-03-06');
    await paid(org, 'mobilepay', 150, '2026-03-07'); // Saturday: with Monday
    await paid(org, 'card', 10_000, '2026-03-09'); // Monday
    await paid(org, 'manual', 50_000, '2026-03-09'); // not settled by the provider
    const res = await list(org);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, {
      data: [
        { id: settlementId(org.organizationId, '2026-03-10'), payoutDate: '2026-03-10', periodStart: '2026-03-07', periodEnd: '2026-03-09', grossOere: 10_150, feeOere: 247, netOere: 9_903, paymentCount: 2, status: 'held' },
        { id: settlementId(org.organizationId, '2026-03-09'), payoutDate: '2026-03-09', periodStart: '2026-03-06', periodEnd: '2026-03-06', grossOere: 2_000, feeOere: 230, netOere: 1_770, paymentCount: 2, status: 'held' },
      ],
      meta: { nextCursor: null },
    });
    assert.match(String(res.body.data[0]?.id), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('a verified organisation\'s payouts are paid from the payout date and pending before it @cluster', async () => {
    const o = await createTestOrg();
    await testDb().db.sql`UPDATE organizations SET verification = 'verified' WHERE id = ${o.organizationId}`;
    const now = await today(o);
    await paid(o, 'card', 5_000, '2026-03-02');
    await paid(o, 'card', 5_000, now);
    const res = await list(o);
    assert.deepEqual(res.body.data.map((s: { payoutDate: string; status: string }) => [s.payoutDate, s.status]), [
      [nextBusinessDay(settlementDay(now)), 'pending'],
      ['2026-03-03', 'paid'],
    ]);
  });

  it('pages by cursor and filters by payout date (from/to inclusive); the cursor belongs to its filters', async () => {
    const o = await createTestOrg();
    for (const d of ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05']) await paid(o, 'card', 1_000, d);
    const first = await list(o, '?limit=2');
    assert.deepEqual(first.body.data.map((s: { payoutDate: string }) => s.payoutDate), ['2026-03-06', '2026-03-05']);
    const second = await list(o, `?limit=2&cursor=${first.body.meta.nextCursor}`);
    assert.deepEqual(second.body.data.map((s: { payoutDate: string }) => s.payoutDate), ['2026-03-04', '2026-03-03']);
    assert.equal(second.body.meta.nextCursor, null);
    const window = await list(o, '?from=2026-03-04&to=2026-03-05');
    assert.deepEqual(window.body.data.map((s: { payoutDate: string }) => s.payoutDate), ['2026-03-05', '2026-03-04']);
    assert.equal((await list(o, `?from=2026-03-04&cursor=${first.body.meta.nextCursor}`)).body.error.code, 'invalid_cursor');
    assert.equal((await list(o, '?from=2026-02-30')).status, 400);
    assert.deepEqual((await list(await createTestOrg())).body, { data: [], meta: { nextCursor: null } });
  });

  it('needs settlements:read', async () => {
    assert.equal((await list({ ...org, apiKey: await createTestKey(org, ['payments:read']) })).status, 403);
  });
});
