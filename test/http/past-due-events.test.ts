import assert from 'node:assert/strict';
import { call, createTestOrg, startTestApp, testClock, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { announcePastDue, reconcilePastDue } from '../../services/customers/past-due-transitions.ts';
import { daysBetween } from '../../services/customers/balance-queries.ts';
import { copenhagenToday } from '../../services/shared/clock.ts';

/**
 * customer.past_due and customer.settled (docs/api-conventions.md, "Customer balance"): fired on the transition of the
 * balance's pastDue (default thresholds 10 000 øre and 14 days), never repeatedly; by a test clock advance, by a
 * payment or credit note in its own transaction, and by the sweep for everything else.
 */
describe('customer.past_due and customer.settled', () => {
  let t: TestApp;
  const sql = () => testDb().db.sql;
  const line = (oere: number) => ({ description: 'Ydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const customer = async (org: TestOrg, externalReference: string) =>
    (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Skyldner A/S', externalReference } })).body.data.id as string;
  const issue = async (org: TestOrg, customerId: string, oere: number, extra: Record<string, unknown> = {}) => {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines: [line(oere)], ...extra } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data as { id: string; dueDate: string };
  };
  const advance = async (org: TestOrg, days: number) => {
    const res = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days } });
    assert.equal(res.status, 200, res.raw);
    return res.body.data.today as string;
  };
  const pay = async (org: TestOrg, invoiceId: string, amountOere: number, paymentDate: string) => {
    const res = await call(t.app, 'POST', `/v1/invoices/${invoiceId}/payments`, { key: org.apiKey, body: { amountOere, paymentDate } });
    assert.equal(res.status, 201, res.raw);
    return res;
  };
  /** The customer events of the organisation as the pull feed shows them. */
  const customerEvents = async (org: TestOrg) => {
    const res = await call(t.app, 'GET', '/v1/events?limit=200', { key: org.apiKey });
    assert.equal(res.status, 200);
    return (res.body.data as { type: string; customer?: { id: string; sekvensnummer: number }; data: Record<string, unknown> }[])
      .filter((e) => e.type.startsWith('customer.'));
  };
  const balance = async (org: TestOrg, customerId: string) => (await call(t.app, 'GET', `/v1/customers/${customerId}/balance`, { key: org.apiKey })).body.data;

  it('a clock advance that crosses the thresholds fires customer.past_due once; the payment that settles fires customer.settled @cluster', async () => {
    const org = await createTestOrg();
    const c = await customer(org, 'erp-debtor-1');
    const inv = await issue(org, c, 30_000); // due in 14 days
    await advance(org, 20); // 6 days overdue: below the 14 days
    assert.deepEqual(await customerEvents(org), []);
    const today = await advance(org, 8); // 14 days overdue
    assert.equal((await balance(org, c)).pastDue, true);
    const [pastDue, ...more] = await customerEvents(org);
    assert.deepEqual(more, []);
    assert.deepEqual(pastDue, {
      ...pastDue,
      type: 'customer.past_due',
      customer: { id: c, sekvensnummer: 1 },
      data: {
        customerId: c, asOf: today, overdueOere: 30_000, overdueCount: 1, oldestDueDate: inv.dueDate, daysOverdue: daysBetween(inv.dueDate, today),
        externalReference: 'erp-debtor-1',
      },
    });
    // Never repeatedly: further time, a further advance, a partial payment that leaves it past due.
    await advance(org, 3);
    await pay(org, inv.id, 5_000, today);
    assert.equal((await customerEvents(org)).length, 1);

    // The payment that takes the overdue amount below 10 000 øre: settled, in the payment's own transaction.
    const settling = await pay(org, inv.id, 20_000, today);
    assert.equal(settling.body.meta.outcome, 'partial');
    assert.equal((await balance(org, c)).pastDue, false);
    const events = await customerEvents(org);
    assert.deepEqual(events.map((e) => [e.type, e.customer!.sekvensnummer]), [['customer.past_due', 1], ['customer.settled', 2]]);
    const asOf = events[1]!.data.asOf as string;
    assert.deepEqual(events[1]!.data, {
      customerId: c, asOf, overdueOere: 5_000, overdueCount: 1, oldestDueDate: inv.dueDate, daysOverdue: daysBetween(inv.dueDate, asOf),
      externalReference: 'erp-debtor-1',
    });
    // The organisation's next look agrees: nothing further to announce.
    await announcePastDue(testDb().db, testClock(), org.organizationId);
    assert.equal((await customerEvents(org)).length, 2);
  });

  it('a credit note can settle a customer announced past due', async () => {
    const org = await createTestOrg();
    const c = await customer(org, 'erp-debtor-2');
    const inv = await issue(org, c, 40_000);
    await advance(org, 30);
    assert.deepEqual((await customerEvents(org)).map((e) => e.type), ['customer.past_due']);
    const credit = await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: org.apiKey, body: { reason: 'Fejlfaktureret' } });
    assert.equal(credit.status, 201, credit.raw);
    assert.deepEqual((await customerEvents(org)).map((e) => [e.type, e.customer!.sekvensnummer]), [['customer.past_due', 1], ['customer.settled', 2]]);
  });

  it("the organisation's PastDue row announces what time alone changed (an invoice issued already overdue), once, and plans its next look", async () => {
    const org = await createTestOrg();
    const c = await customer(org, 'erp-debtor-3');
    const today = copenhagenToday(await testClock().now(org.organizationId));
    const longAgo = new Date(Date.parse(`${today}T00:00:00Z`) - 40 * 86_400_000).toISOString().slice(0, 10);
    const inv = await issue(org, c, 25_000, { dueDate: longAgo });
    assert.equal((await balance(org, c)).pastDue, true);
    assert.deepEqual(await customerEvents(org), [], 'issuing announces nothing; the PastDue row does');
    // The issue listed the organisation's PastDue row, due the day after the invoice's due date (long past: now).
    const row = async () =>
      (await sql()<{ due_at: Date }[]>`SELECT due_at FROM wake_index WHERE service = 'PastDue' AND key = ${org.organizationId}`)[0];
    const midnight = (date: string) => sql()<{ t: Date }[]>`SELECT (${date}::date + 1)::timestamp AT TIME ZONE 'Europe/Copenhagen' AS t`;
    assert.equal((await row())!.due_at.getTime(), (await midnight(longAgo))[0]!.t.getTime());
    const first = await announcePastDue(testDb().db, testClock(), org.organizationId);
    assert.equal(first.changed, 1);
    assert.deepEqual((await customerEvents(org)).map((e) => e.type), ['customer.past_due']);
    // Something stays past due: the next look is the start of the next business day, and the row says so.
    const tomorrow = (await midnight(today))[0]!.t;
    assert.equal(first.next, tomorrow.toISOString());
    assert.equal((await row())!.due_at.getTime(), tomorrow.getTime());
    const second = await announcePastDue(testDb().db, testClock(), org.organizationId);
    assert.equal(second.changed, 0);
    assert.deepEqual((await customerEvents(org)).map((e) => e.type), ['customer.past_due'], 'a second look repeats nothing');
    assert.equal(inv.dueDate, longAgo);
  });

  it('an organisation with nothing open has no PastDue row; a changed threshold lists one at once', async () => {
    const org = await createTestOrg();
    const c = await customer(org, 'erp-sweep');
    const inv = await issue(org, c, 25_000);
    const paid = await pay(org, inv.id, 25_000, copenhagenToday(await testClock().now(org.organizationId)));
    assert.equal(paid.status, 201, paid.raw);
    assert.deepEqual(await announcePastDue(testDb().db, testClock(), org.organizationId), { changed: 0, next: null });
    const rows = () => sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM wake_index WHERE service = 'PastDue' AND key = ${org.organizationId}`;
    assert.equal((await rows())[0]!.n, 0);
    await sql()`UPDATE organizations SET past_due_days = 3 WHERE id = ${org.organizationId}`;
    const [due] = await sql()<{ now: boolean }[]>`
      SELECT due_at <= business_now(organization_id) AS now FROM wake_index WHERE service = 'PastDue' AND key = ${org.organizationId}`;
    assert.equal(due!.now, true);
  });

  it('parallel payments that together settle a past-due customer announce customer.settled exactly once @cluster', async () => {
    const org = await createTestOrg();
    const c = await customer(org, 'erp-debtor-4');
    const invoices = [];
    for (let i = 0; i < 8; i++) invoices.push(await issue(org, c, 10_000));
    const today = await advance(org, 30);
    assert.deepEqual((await customerEvents(org)).map((e) => e.type), ['customer.past_due']);
    // Each payment alone leaves the customer past due; all of them settle it.
    await Promise.all(invoices.map((inv) => pay(org, inv.id, 10_000, today)));
    assert.equal((await balance(org, c)).pastDue, false);
    // A payment whose snapshot missed the others leaves the transition to the organisation's next look.
    await announcePastDue(testDb().db, testClock(), org.organizationId);
    await announcePastDue(testDb().db, testClock(), org.organizationId);
    assert.deepEqual((await customerEvents(org)).map((e) => e.type), ['customer.past_due', 'customer.settled']);
    const [row] = await sql()<{ past_due: boolean }[]>`SELECT past_due FROM customers WHERE id = ${c}`;
    assert.equal(row!.past_due, false);
  });

  it('a reconciliation with a today older than the last announcement changes nothing (a slow caller cannot undo it)', async () => {
    const org = await createTestOrg();
    const c = await customer(org, 'erp-debtor-6');
    const inv = await issue(org, c, 30_000);
    const before = await advance(org, 1); // a day on which the invoice is not yet overdue
    await advance(org, 30);
    assert.deepEqual((await customerEvents(org)).map((e) => e.type), ['customer.past_due']);
    // A caller that read "today" before the advance reconciles only now: on that day the invoice was not overdue.
    const stale = await testDb().db.tx((tx) => reconcilePastDue(tx, org.organizationId, before, [c]));
    assert.deepEqual(stale, { pastDue: [], settled: [] });
    assert.deepEqual((await customerEvents(org)).map((e) => e.type), ['customer.past_due']);
    assert.ok(inv.dueDate > before);
  });

  it('thresholds that a single small invoice does not reach announce nothing', async () => {
    const org = await createTestOrg();
    const c = await customer(org, 'erp-debtor-5');
    await issue(org, c, 9_999);
    await advance(org, 60);
    assert.equal((await balance(org, c)).pastDue, false);
    await announcePastDue(testDb().db, testClock(), org.organizationId);
    assert.deepEqual(await customerEvents(org), []);
  });
});
