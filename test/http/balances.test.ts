import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { runScript } from '../helpers/scripts.ts';
import type { Clock } from '../../services/shared/clock.ts';
import { uuidv7 } from '../../services/shared/ids.ts';

/**
 * Customer balances (docs/api-conventions.md, "Customer balance") computed from invoices, credit notes, fees and
 * payments with the organisation's today, and the pastDue filter of the customer list, which must agree with them.
 */


/** The operator command as an operator runs it: its own process, on the tests' database. */
const admin = (args: string[]) => runScript('services/admin/cli.ts', args, { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL });

const line = (oere: number) => ({ description: 'Ydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

// Invoices are issued on ISSUED; balances are read on READ, when OLD is 36 days past and RECENT 5 days.
const ISSUED = '2026-01-05';
const READ = '2026-02-20';
const OLD = '2026-01-15';
const RECENT = '2026-02-15';
const FUTURE = '2026-03-01';

interface Expected {
  outstandingOere: number;
  overdueOere: number;
  overdueCount: number;
  oldestDueDate: string | null;
  daysOverdue: number;
  collectionsOere: number;
  creditOere: number;
  pastDue: boolean;
}

const ZERO: Expected = {
  outstandingOere: 0, overdueOere: 0, overdueCount: 0, oldestDueDate: null, daysOverdue: 0, collectionsOere: 0, creditOere: 0, pastDue: false,
};

describe('customer balances', () => {
  let t: TestApp;
  let org: TestOrg;
  let today = ISSUED;
  const clock: Clock = { now: async () => new Date(`${today}T12:00:00Z`), today: async () => today };
  const sql = () => testDb().db.sql;

  const customer = async (name: string, o: TestOrg = org): Promise<string> => {
    const res = await call(t.app, 'POST', '/v1/customers', { key: o.apiKey, body: { type: 'company', name } });
    assert.equal(res.status, 201);
    return res.body.data.id;
  };
  const invoice = async (customerId: string, grossOere: number, dueDate: string, o: TestOrg = org): Promise<string> => {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: o.apiKey, body: { customerId, lines: [line(grossOere)], dueDate } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data.id;
  };
  const pay = async (invoiceId: string, amountOere: number, paymentDate = today) => {
    const res = await call(t.app, 'POST', `/v1/invoices/${invoiceId}/payments`, { key: org.apiKey, body: { amountOere, paymentDate } });
    assert.equal(res.status, 201, res.raw);
    return res.body;
  };
  /** A reminder fee as the reminder engine records it. */
  const fee = async (invoiceId: string, amountOere: number) => {
    const [inv] = await sql()<{ organization_id: string; customer_id: string }[]>`SELECT organization_id, customer_id FROM invoices WHERE id = ${invoiceId}`;
    await sql()`
      INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere)
      VALUES (${uuidv7()}, ${inv!.organization_id}, ${invoiceId}, ${inv!.customer_id}, 'reminder', ${amountOere})`;
  };
  const balance = async (customerId: string, key = org.apiKey) => call(t.app, 'GET', `/v1/customers/${customerId}/balance`, { key });
  const figures = async (customerId: string): Promise<Expected> => {
    const res = await balance(customerId);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.customerId, customerId);
    assert.equal(res.body.data.asOf, today);
    const { customerId: _id, asOf: _asOf, ...rest } = res.body.data;
    return rest;
  };
  const listIds = async (query: string, o: TestOrg = org): Promise<string[]> => {
    const res = await call(t.app, 'GET', `/v1/customers?${query}`, { key: o.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body.data.map((c: { id: string }) => c.id).sort();
  };

  const ids: Record<string, string> = {};
  const invoiceIds: Record<string, string> = {};
  const expected: Record<string, Expected> = {};

  before(async () => {
    t = await startTestApp({ clock });
    org = await createTestOrg({ name: 'Saldo ApS' });
    today = ISSUED;

    ids.nothing = await customer('Ingen fakturaer');
    invoiceIds.draft = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId: ids.nothing, lines: [line(100_000)], dueDate: OLD } })).body.data.id;
    expected.nothing = ZERO;

    ids.partial = await customer('Delvist betalt');
    const partial = await invoice(ids.partial, 100_000, OLD);
    expected.partial = { ...ZERO, outstandingOere: 70_000, overdueOere: 70_000, overdueCount: 1, oldestDueDate: OLD, daysOverdue: 36, pastDue: true };

    ids.full = await customer('Fuldt betalt');
    const full = await invoice(ids.full, 100_000, OLD);
    invoiceIds.full = full;
    expected.full = ZERO;

    ids.over = await customer('Overbetalt');
    const over = await invoice(ids.over, 100_000, OLD);
    expected.over = { ...ZERO, creditOere: -50_000 };

    ids.credited = await customer('Krediteret');
    const creditedPaid = await invoice(ids.credited, 100_000, OLD);
    const creditedUnpaid = await invoice(ids.credited, 40_000, OLD);
    expected.credited = { ...ZERO, creditOere: -30_000 };

    // Settled first, then changed: a credit note or a further payment turns a paid invoice's 0 into credit.
    ids.paidThenCredited = await customer('Betalt, så krediteret');
    const paidThenCredited = await invoice(ids.paidThenCredited, 100_000, OLD);
    await invoice(ids.paidThenCredited, 20_000, OLD);
    expected.paidThenCredited = { ...ZERO, outstandingOere: 20_000, overdueOere: 20_000, overdueCount: 1, oldestDueDate: OLD, daysOverdue: 36, creditOere: -100_000, pastDue: true };

    ids.paidTwice = await customer('Betalt to gange');
    const paidTwice = await invoice(ids.paidTwice, 100_000, OLD);
    expected.paidTwice = { ...ZERO, creditOere: -3_000 };

    ids.fees = await customer('Med gebyrer');
    const feeInvoice = await invoice(ids.fees, 100_000, OLD);
    await fee(feeInvoice, 10_000);
    const onlyFees = await invoice(ids.fees, 20_000, RECENT);
    await fee(onlyFees, 10_000);
    expected.fees = { ...ZERO, outstandingOere: 60_000, overdueOere: 60_000, overdueCount: 2, oldestDueDate: OLD, daysOverdue: 36, pastDue: true };

    ids.small = await customer('Lille beløb');
    await invoice(ids.small, 5_000, OLD);
    expected.small = { ...ZERO, outstandingOere: 5_000, overdueOere: 5_000, overdueCount: 1, oldestDueDate: OLD, daysOverdue: 36 };

    ids.recent = await customer('For nylig forfalden');
    await invoice(ids.recent, 100_000, RECENT);
    expected.recent = { ...ZERO, outstandingOere: 100_000, overdueOere: 100_000, overdueCount: 1, oldestDueDate: RECENT, daysOverdue: 5 };

    ids.notDue = await customer('Ikke forfalden');
    await invoice(ids.notDue, 100_000, FUTURE);
    await invoice(ids.notDue, 30_000, READ);
    expected.notDue = { ...ZERO, outstandingOere: 130_000 };

    ids.collections = await customer('Inkasso');
    const collected = await invoice(ids.collections, 100_000, OLD);
    expected.collections = {
      ...ZERO, outstandingOere: 80_000, overdueOere: 80_000, overdueCount: 1, oldestDueDate: OLD, daysOverdue: 36, collectionsOere: 80_000, pastDue: true,
    };

    ids.mixed = await customer('Blandet');
    await invoice(ids.mixed, 50_000, OLD);
    await invoice(ids.mixed, 8_000, RECENT);
    await invoice(ids.mixed, 30_000, FUTURE);
    const mixedOver = await invoice(ids.mixed, 10_000, RECENT);
    expected.mixed = {
      ...ZERO, outstandingOere: 88_000, overdueOere: 58_000, overdueCount: 2, oldestDueDate: OLD, daysOverdue: 36, creditOere: -2_000, pastDue: true,
    };

    // Payments are registered on the read day, when every due date above has passed or not as the tables say.
    today = READ;
    await pay(partial, 30_000, '2026-01-20');
    assert.equal((await pay(full, 100_000)).meta.outcome, 'paid_in_full');
    assert.equal((await pay(over, 150_000)).meta.outcome, 'registered');
    await pay(creditedPaid, 30_000);
    for (const id of [creditedPaid, creditedUnpaid]) {
      assert.equal((await call(t.app, 'POST', `/v1/invoices/${id}/credit`, { key: org.apiKey, body: { reason: 'Annulleret' } })).status, 201);
    }
    assert.equal((await pay(paidThenCredited, 100_000)).data.status, 'paid');
    assert.equal((await call(t.app, 'POST', `/v1/invoices/${paidThenCredited}/credit`, { key: org.apiKey, body: { reason: 'Retur' } })).status, 201);
    assert.equal((await pay(paidTwice, 100_000)).meta.outcome, 'paid_in_full');
    assert.equal((await pay(paidTwice, 3_000)).meta.outcome, 'registered');
    // The fee counts in the balance: paying the gross leaves the fee, so the payment is partial.
    const feePaid = await pay(feeInvoice, 60_000);
    assert.deepEqual([feePaid.meta.outcome, feePaid.data.reminderFeeOere, feePaid.data.balanceOere], ['partial', 10_000, 50_000]);
    const gross = await pay(onlyFees, 20_000);
    assert.deepEqual([gross.meta.outcome, gross.data.status, gross.data.balanceOere], ['partial', 'issued', 10_000]);
    await sql()`UPDATE invoices SET status = 'collections' WHERE id = ${collected}`;
    await pay(collected, 20_000);
    await pay(mixedOver, 12_000);
  });
  after(() => t.close());

  it('computes each table row exactly: partial, full, over, credited, paid then changed, with fees, below thresholds, not due, collections, mixed', async () => {
    today = READ;
    for (const name of Object.keys(expected)) {
      assert.deepEqual(await figures(ids[name]!), expected[name], name);
    }
  });

  it('takes fees on open invoices only, and never changes or removes a fee or a payment', async () => {
    const refused = async (run: () => Promise<unknown>, code: string) =>
      assert.rejects(run(), (err: { code?: string }) => err.code === code);
    // 23514 check_violation: a fee on a settled invoice or on a draft.
    await refused(() => fee(invoiceIds.full!, 10_000), '23514');
    await refused(() => fee(invoiceIds.draft!, 10_000), '23514');
    // 42501 insufficient_privilege: fees and payments are fixed once written.
    await refused(() => sql()`UPDATE invoice_fees SET amount_oere = 1 WHERE customer_id = ${ids.fees!}`, '42501');
    await refused(() => sql()`DELETE FROM invoice_fees WHERE customer_id = ${ids.fees!}`, '42501');
    await refused(() => sql()`UPDATE payments SET amount_oere = 1 WHERE invoice_id = ${invoiceIds.full!}`, '42501');
    await refused(() => sql()`DELETE FROM payments WHERE invoice_id = ${invoiceIds.full!}`, '42501');
    today = READ;
    assert.deepEqual(await figures(ids.full!), expected.full);
    assert.deepEqual(await figures(ids.fees!), expected.fees);
  });

  it('shows fees in the invoice itself: gross + reminder fees − paid − credited', async () => {
    today = READ;
    const list = await call(t.app, 'GET', `/v1/invoices?customerId=${ids.fees}`, { key: org.apiKey });
    const amounts = list.body.data
      .map((i: { grossOere: number; reminderFeeOere: number; paidOere: number; creditedOere: number; balanceOere: number }) =>
        [i.grossOere, i.reminderFeeOere, i.paidOere, i.creditedOere, i.balanceOere])
      .sort((a: number[], b: number[]) => a[0]! - b[0]!);
    assert.deepEqual(amounts, [[20_000, 10_000, 20_000, 0, 10_000], [100_000, 10_000, 60_000, 0, 50_000]]);
  });

  it('GET /v1/customers?pastDue=true|false splits the customers exactly as their balances say', async () => {
    today = READ;
    const pastDue = Object.keys(expected).filter((n) => expected[n]!.pastDue).map((n) => ids[n]!).sort();
    const notPastDue = Object.keys(expected).filter((n) => !expected[n]!.pastDue).map((n) => ids[n]!).sort();
    assert.deepEqual(await listIds('pastDue=true'), pastDue);
    assert.deepEqual(await listIds('pastDue=false'), notPastDue);
    assert.equal((await listIds('limit=200')).length, pastDue.length + notPastDue.length);
  });

  it("counts days from the organisation's today: 14 days overdue is past due, 13 is not", async () => {
    today = '2026-02-28';
    assert.equal((await figures(ids.recent!)).daysOverdue, 13);
    assert.equal((await figures(ids.recent!)).pastDue, false);
    assert.ok(!(await listIds('pastDue=true')).includes(ids.recent!));
    today = '2026-03-01';
    assert.deepEqual(await figures(ids.recent!), { ...expected.recent!, daysOverdue: 14, pastDue: true });
    assert.ok((await listIds('pastDue=true')).includes(ids.recent!));
    // Of the two invoices due 2026-02-20 and 2026-03-01, the second is due today, not overdue; a day later it is.
    assert.deepEqual(await figures(ids.notDue!), { ...expected.notDue!, overdueOere: 30_000, overdueCount: 1, oldestDueDate: READ, daysOverdue: 9 });
    today = '2026-03-02';
    assert.deepEqual(await figures(ids.notDue!), { ...expected.notDue!, overdueOere: 130_000, overdueCount: 2, oldestDueDate: READ, daysOverdue: 10 });
    today = READ;
  });

  it('takes the thresholds from the organisation, set by the operator command', async () => {
    today = READ;
    const set = await admin(['update-org', '--org', org.organizationId, '--past-due-min-oere', '5000', '--past-due-min-days', '3', '--json']);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout), { organizationId: org.organizationId, updated: true });
    const [row] = await sql()`SELECT past_due_amount_oere, past_due_days FROM organizations WHERE id = ${org.organizationId}`;
    assert.deepEqual({ ...row }, { past_due_amount_oere: 5_000, past_due_days: 3 });
    assert.equal((await figures(ids.small!)).pastDue, true);
    assert.equal((await figures(ids.recent!)).pastDue, true);
    const list = await listIds('pastDue=true');
    for (const name of ['small', 'recent', 'partial']) assert.ok(list.includes(ids[name]!), name);

    for (const [flag, value] of [['--past-due-min-oere', '-1'], ['--past-due-min-oere', '12.5'], ['--past-due-min-days', '3651'], ['--past-due-min-days', 'x']]) {
      const bad = await admin(['update-org', '--org', org.organizationId, flag!, value!]);
      assert.equal(bad.code, 2, `${flag} ${value}`);
      assert.match(bad.stderr, new RegExp(`^error: ${flag} must be a whole number`));
    }
    const reset = await admin(['update-org', '--org', org.organizationId, '--past-due-min-oere', '10000', '--past-due-min-days', '14']);
    assert.equal(reset.code, 0, reset.stderr);
    assert.equal((await figures(ids.small!)).pastDue, false);
    // Thresholds are each organisation's own; a new one starts with the defaults.
    const fresh = await createTestOrg();
    const [other] = await sql()`SELECT past_due_amount_oere, past_due_days FROM organizations WHERE id = ${fresh.organizationId}`;
    assert.deepEqual({ ...other }, { past_due_amount_oere: 10_000, past_due_days: 14 });
  });

  it('pages the pastDue list with a cursor bound to the filter', async () => {
    today = READ;
    const pastDue = Object.keys(expected).filter((n) => expected[n]!.pastDue).map((n) => ids[n]!).sort().reverse();
    const first = await call(t.app, 'GET', '/v1/customers?pastDue=true&limit=2', { key: org.apiKey });
    assert.deepEqual(first.body.data.map((c: { id: string }) => c.id), pastDue.slice(0, 2));
    const second = await call(t.app, 'GET', `/v1/customers?pastDue=true&limit=2&cursor=${first.body.meta.nextCursor}`, { key: org.apiKey });
    assert.deepEqual(second.body.data.map((c: { id: string }) => c.id), pastDue.slice(2, 4));
    const carried = await call(t.app, 'GET', `/v1/customers?limit=2&cursor=${first.body.meta.nextCursor}`, { key: org.apiKey });
    assert.equal(carried.status, 400);
    assert.equal(carried.body.error.code, 'invalid_cursor');
    const bad = await call(t.app, 'GET', '/v1/customers?pastDue=maybe', { key: org.apiKey });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'validation_failed');
  });

  it("answers 404 customer_not_found for unknown ids, non-UUIDs and another organisation's customer; needs customers:read", async () => {
    const other = await createTestOrg();
    const foreign = await customer('Fremmed', other);
    for (const id of [foreign, '01900000-0000-7000-8000-000000000000', 'abc']) {
      const res = await balance(id);
      assert.equal(res.status, 404, id);
      assert.equal(res.body.error.code, 'customer_not_found');
    }
    const paymentsOnly = await createTestKey(org, ['payments:read']);
    const refused = await balance(ids.partial!, paymentsOnly);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body.error.details, [{ path: '', message: 'required scope: customers:read' }]);
    // Another organisation's past-due customers never show in this one's list, nor the other way round.
    today = ISSUED;
    const debtor = await customer('Skyldner', other);
    await invoice(debtor, 500_000, OLD, other);
    today = READ;
    assert.deepEqual(await listIds('pastDue=true', other), [debtor]);
    assert.ok(!(await listIds('pastDue=true')).includes(debtor));
  });
});

/** The same figures whichever process answers: read back after writes that may each have gone to another one. */
describe("a customer's balance, as any API process computes it @cluster", () => {
  let t: TestApp;
  let org: TestOrg;
  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Saldo ApS' });
  });
  after(() => t.close());

  it('is the open invoice less the payment, nothing overdue before the due date', async () => {
    const today = (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today as string;
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
    const inv = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines: [line(100_000)], paymentTermsDays: 30 } });
    assert.equal(inv.status, 201, inv.raw);
    const paid = await call(t.app, 'POST', `/v1/invoices/${inv.body.data.id}/payments`, { key: org.apiKey, body: { amountOere: 30_000, paymentDate: today } });
    assert.equal(paid.status, 201, paid.raw);
    const res = await call(t.app, 'GET', `/v1/customers/${customerId}/balance`, { key: org.apiKey });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.data, { ...ZERO, customerId, asOf: today, outstandingOere: 70_000 });
  });
});
