import assert from 'node:assert/strict';
import { call, createTestOrg, testDb, type TestOrg } from '../helpers/context.ts';
import { startScenario, type Scenario } from '../helpers/scenario.ts';

/**
 * One organisation never holds up another (docs/architecture.md, "Time-driven work"): a sandbox organisation whose
 * test clock jumps two months with many open invoices makes hundreds of dunning steps due at once. While that backlog
 * runs, every wake-index row has at most one invocation in flight or queued, and a second organisation's due
 * reminders are taken beside it, not after it. Real restate-server, PostgreSQL, Chromium and SMTP on loopback.
 */
describe('scenario: a noisy neighbour holds up nobody', function () {
  this.timeout(300_000);
  const NOISY_INVOICES = 30;
  const QUIET_INVOICES = 4;
  let s: Scenario;
  let quiet: TestOrg;

  before(async () => {
    s = await startScenario({ orgName: 'Larm ApS' });
    quiet = await createTestOrg({ name: 'Stille ApS' });
  });
  after(async () => {
    await s?.close();
  });

  const quietCall = (method: string, url: string, body?: unknown) => call(s.api.app, method, url, { key: quiet.apiKey, ...(body !== undefined ? { body } : {}) });

  /** Invocations of one service that are not completed, by key: what Restate holds in flight or queued. */
  const unfinished = async (service: string): Promise<Map<string, number>> => {
    const rows = await s.restate.query<{ key: string; n: number }>(
      `SELECT target_service_key AS key, count(*) AS n FROM sys_invocation WHERE target_service_name = '${service}' AND status <> 'completed' GROUP BY target_service_key`,
    );
    return new Map(rows.map((r) => [r.key, Number(r.n)]));
  };

  it("a two-month catch-up of one organisation keeps one invocation per row, and another organisation's due reminders are taken beside it", async () => {
    for (let i = 0; i < NOISY_INVOICES; i++) await s.issue({ paymentTermsDays: 14 });
    const customer = await quietCall('POST', '/v1/customers', { type: 'company', name: 'Kunde B A/S', cvr: '11223344', email: 'bogholderi@kunde-b.dk' });
    assert.equal(customer.status, 201, customer.raw);
    const quietIds: string[] = [];
    for (let i = 0; i < QUIET_INVOICES; i++) {
      const res = await quietCall('POST', '/v1/invoices?issue=true', {
        customerId: customer.body.data.id,
        lines: [{ description: 'Ydelse', quantity: 1, unitPriceOere: 50_000, vatRateBps: 2500 }],
        paymentTermsDays: 14,
      });
      assert.equal(res.status, 201, res.raw);
      quietIds.push(res.body.data.id);
    }

    // The noisy organisation's clock jumps 60 days: three reminders per invoice come due at once.
    const jumped = await call(s.api.app, 'POST', '/v1/test-clock/advance', { key: s.org.apiKey, body: { days: 60 } });
    assert.equal(jumped.status, 200, jumped.raw);
    // Then the quiet organisation's first reminders come due (due date + 7).
    const started = Date.now();
    const advanced = await quietCall('POST', '/v1/test-clock/advance', { days: 21 });
    assert.equal(advanced.status, 200, advanced.raw);

    let mostPerKey = 0;
    let quietDoneAfterMs: number | null = null;
    let noisyLeftWhenQuietDone = 0;
    for (const until = Date.now() + 240_000; Date.now() < until; ) {
      const inFlight = await unfinished('Dunning');
      mostPerKey = Math.max(mostPerKey, ...inFlight.values(), 0);
      if (quietDoneAfterMs === null) {
        const [taken] = await testDb().db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM reminders WHERE organization_id = ${quiet.organizationId} AND reminder_number = 1`;
        if (taken!.n === QUIET_INVOICES) {
          quietDoneAfterMs = Date.now() - started;
          const [left] = await testDb().db.sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM wake_index WHERE organization_id = ${s.org.organizationId} AND service = 'Dunning' AND due_at <= business_now(organization_id)`;
          noisyLeftWhenQuietDone = left!.n;
        }
      }
      if (quietDoneAfterMs !== null && inFlight.size === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await s.settle(120_000);

    assert.ok(quietDoneAfterMs !== null, "the quiet organisation's reminders were taken");
    assert.ok(quietDoneAfterMs < 20_000, `the quiet organisation waited ${quietDoneAfterMs} ms`);
    assert.ok(noisyLeftWhenQuietDone > 0, 'the quiet organisation was served while the noisy backlog was still running');
    assert.equal(mostPerKey, 1, 'at most one Dunning invocation in flight or queued per invoice');
    const [reminders] = await testDb().db.sql<{ n: number; distinct: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT (invoice_id, reminder_number))::int AS distinct FROM reminders WHERE organization_id = ${s.org.organizationId}`;
    assert.equal(reminders!.n, NOISY_INVOICES * 3, 'three reminders per noisy invoice');
    assert.equal(reminders!.distinct, reminders!.n, 'none taken twice');
  });
});
