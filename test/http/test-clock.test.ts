import assert from 'node:assert/strict';
import { createBusinessClock } from '../../services/clock/business-clock.ts';
import { addCopenhagenDays, addDays, copenhagenToday } from '../../services/shared/clock.ts';
import { advanceTestClock } from '../../services/clock/test-clock.ts';
import { createSql, type Tx } from '../../services/shared/db.ts';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

const DAY = 86_400_000;

/** Business time: GET /v1/test-clock, POST /v1/test-clock/advance, and every "today" following the test clock. */
describe('test clock', () => {
  let t: TestApp;
  // No workflow engine here: what an advance wakes is followed end to end in test/workflows/webhook-delivery.test.ts.
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const clockOf = async (org: TestOrg) => (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data;
  const advance = (org: TestOrg, body: unknown) => call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body });

  it('shows a sandbox organisation in test mode and a live one in live mode, both at real time to begin with', async () => {
    const sandbox = await createTestOrg();
    const live = await createTestOrg({ sandbox: false });
    for (const [org, mode] of [[sandbox, 'test'], [live, 'live']] as const) {
      const res = await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body.data), ['mode', 'now', 'today']);
      assert.equal(res.body.data.mode, mode);
      assert.ok(Math.abs(Date.parse(res.body.data.now) - Date.now()) < 5000);
      assert.equal(res.body.data.today, copenhagenToday(new Date(res.body.data.now)));
    }
  });

  it('advances by days and to an instant, forward only @cluster', async () => {
    const org = await createTestOrg();
    const byDays = await advance(org, { days: 30 });
    assert.equal(byDays.status, 200);
    assert.equal(byDays.body.data.mode, 'test');
    // 30 calendar days in Copenhagen: 30 × 24 hours unless a daylight-saving change lies between.
    assert.ok(Math.abs(Date.parse(byDays.body.data.now) - addCopenhagenDays(Date.now(), 30)) < 5000);
    const read = await clockOf(org);
    assert.ok(Math.abs(Date.parse(read.now) - addCopenhagenDays(Date.now(), 30)) < 5000, 'the clock keeps the advance');
    assert.equal(read.today, copenhagenToday(new Date(addCopenhagenDays(Date.now(), 30))));

    const target = new Date(Date.now() + 100 * DAY).toISOString();
    const to = await advance(org, { to: target });
    assert.equal(to.status, 200);
    assert.equal(to.body.data.now, target);
    const later = await clockOf(org);
    assert.ok(Date.parse(later.now) >= Date.parse(target) && Date.parse(later.now) - Date.parse(target) < 5000, 'time flows on from there');

    const back = await advance(org, { to: new Date(Date.now() + 50 * DAY).toISOString() });
    assert.equal(back.status, 422);
    assert.equal(back.body.error.code, 'test_clock_backwards');
    assert.equal(back.body.error.details[0].path, '/to');
    assert.ok(Date.parse((await clockOf(org)).now) >= Date.parse(target), 'a refused advance moves nothing');
  });

  it('refuses live organisations (403 sandbox_only) and malformed bodies (400)', async () => {
    const live = await createTestOrg({ sandbox: false });
    const res = await advance(live, { days: 1 });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'sandbox_only');
    const [row] = await testDb().db.sql`SELECT 1 FROM test_clocks WHERE organization_id = ${live.organizationId}`;
    assert.equal(row, undefined);

    const org = await createTestOrg();
    for (const body of [{}, { days: 0 }, { days: 3651 }, { days: 1.5 }, { days: 1, to: new Date().toISOString() }, { to: '2030-01-01' }, { to: 'soon' }, { hours: 3 }]) {
      const bad = await advance(org, body);
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.equal(bad.body.error.code, 'validation_failed');
    }
    // A bad field is reported where it is, with its bound.
    for (const [body, path, message] of [
      [{ days: 0 }, '/days', 'must be >= 1'],
      [{ days: 3651 }, '/days', 'must be <= 3650'],
      [{ days: '1' }, '/days', 'must be integer'],
      [{ to: 'soon' }, '/to', 'must be a valid date-time'],
    ] as const) {
      const bad = await advance(org, body);
      assert.deepEqual(bad.body.error.details, [{ path, message }], JSON.stringify(body));
    }
    // No body at all is refused the same way (never read as an advance by nothing).
    const none = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey });
    assert.equal(none.status, 400);
    assert.equal(none.body.error.code, 'validation_failed');
    const empty = await advance(org, {});
    assert.deepEqual(none.body.error.details, empty.body.error.details, 'no body is answered like {}');
    assert.equal(none.body.error.message, empty.body.error.message);
    assert.equal((await advance(org, { days: 3650 })).status, 200);
  });

  it('moves the Copenhagen date by exactly the days asked, also across a daylight-saving change late in the evening', async () => {
    const org = await createTestOrg();
    // Real time 23:30 in Copenhagen on 27 March 2027 (winter time); summer time begins the next night. Ten 24-hour
    // steps would read 00:30 on 7 April; ten calendar days are 23:30 on 6 April (summer time, 21:30 UTC).
    const realNow = () => Date.parse('2027-03-27T22:30:00Z');
    const spring = await testDb().db.sql.begin((tx) => advanceTestClock(tx as unknown as Tx, org.organizationId, { days: 10 }, realNow));
    assert.deepEqual(spring, { mode: 'test', now: '2027-04-06T21:30:00.000Z', today: '2027-04-06' });
    // Back to winter: 23:30 on 6 April (summer) + 215 days is 23:30 on 7 November (winter, 22:30 UTC).
    const autumn = await testDb().db.sql.begin((tx) => advanceTestClock(tx as unknown as Tx, org.organizationId, { days: 215 }, realNow));
    assert.deepEqual(autumn, { mode: 'test', now: '2027-11-07T22:30:00.000Z', today: '2027-11-07' });
  });

  it('stops a month short of the year 10000 (400 on the field that would take it there), and stays where it was', async () => {
    const org = await createTestOrg({ sandbox: true });
    // Within an hour of 10000-01-01 in Copenhagen: real time would carry today past 9999-12-31 at once.
    const nearEnd = await advance(org, { to: '9999-12-31T22:59:55Z' });
    assert.equal(nearEnd.status, 400);
    assert.deepEqual(nearEnd.body.error.details, [{ path: '/to', message: 'must stay before 9999-12-01T00:00:00.000Z' }]);
    assert.equal((await advance(org, { to: '9999-11-30T00:00:00Z' })).status, 200);
    const tooFar = await advance(org, { days: 10 });
    assert.equal(tooFar.status, 400);
    assert.equal(tooFar.body.error.code, 'validation_failed');
    assert.deepEqual(tooFar.body.error.details, [{ path: '/days', message: 'must stay before 9999-12-01T00:00:00.000Z' }]);
    const clock = await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey });
    assert.equal(clock.body.data.today, '9999-11-30');
  });

  it('needs settings:read to look and settings:write to advance', async () => {
    const org = await createTestOrg();
    const reader = await createTestKey(org, ['settings:read']);
    assert.equal((await call(t.app, 'GET', '/v1/test-clock', { key: reader })).status, 200);
    const denied = await call(t.app, 'POST', '/v1/test-clock/advance', { key: reader, body: { days: 1 } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'insufficient_scope');
    const none = await createTestKey(org, ['invoices:read']);
    assert.equal((await call(t.app, 'GET', '/v1/test-clock', { key: none })).status, 403);
  });

  it('is what existing business rules read: an invoice issued after an advance is dated on the business day', async () => {
    const org = await createTestOrg();
    await advance(org, { days: 40 });
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'P' } })).body.data.id;
    const inv = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines: [{ description: 'x', quantity: 1, unitPriceOere: 100 }] } });
    assert.equal(inv.status, 201);
    const today = (await clockOf(org)).today;
    assert.equal(inv.body.data.issueDate, today);
    assert.equal(inv.body.data.dueDate, addDays(today, 14));
    assert.equal(today, copenhagenToday(new Date(Date.now() + 40 * DAY)));
  });

  it('is seen at once by another process: only the (immutable) sandbox flag is cached @cluster', async () => {
    const org = await createTestOrg();
    const sql = createSql(process.env.TEST_DATABASE_URL!, { max: 1 });
    try {
      const other = createBusinessClock(sql);
      const before = await other.now(org.organizationId);
      assert.ok(Math.abs(before.getTime() - Date.now()) < 5000);
      await advance(org, { days: 7 });
      const after = await other.now(org.organizationId);
      assert.ok(Math.abs(after.getTime() - (Date.now() + 7 * DAY)) < 5000);
      assert.equal(await other.mode(org.organizationId), 'test');
    } finally {
      await sql.end();
    }
  });
});
