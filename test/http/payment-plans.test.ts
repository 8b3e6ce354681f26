import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type ApiResponse, type TestApp, type TestOrg } from '../helpers/context.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { addDays } from '../../services/shared/clock.ts';
import { takeDueDunningStep } from '../../services/reminders/take-due-dunning-step.ts';

/**
 * Payment plans (docs/reminders.md, "Payment plans") through the real app: POST/GET …/payment-plan and …/cancel, every
 * refusal, instalments filled by payments, completion, the credit note that cancels, the refusals of collect and of a
 * manual reminder while a plan is active, and waived interest. The dunning step is driven directly here (this tier
 * has no engine), as the Dunning object drives it; the whole calendar runs on the engine in
 * test/scenarios/payment-plans.test.ts.
 */
describe('payment plans', () => {
  let t: TestApp;
  const sql = () => testDb().db.sql;
  const line = (oere: number) => ({ description: 'Konsulentydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  function assertError(res: ApiResponse, status: number, code: string): void {
    assert.equal(res.status, status, res.raw);
    assert.equal(res.body.error.code, code, res.raw);
    assert.ok(res.body.error.message.length > 0);
  }

  interface Inv {
    org: TestOrg;
    invoiceId: string;
    customerId: string;
    dueDate: string;
  }

  const today = async (org: TestOrg): Promise<string> => (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today as string;
  const advance = async (org: TestOrg, days: number): Promise<string> => {
    const res = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days } });
    assert.equal(res.status, 200, res.raw);
    return res.body.data.today as string;
  };
  const newInvoice = async (opts: { settings?: Record<string, unknown>; grossOere?: number; draft?: boolean; org?: TestOrg } = {}): Promise<Inv> => {
    const org = opts.org ?? (await createTestOrg());
    if (opts.settings) {
      const res = await call(t.app, 'PUT', '/v1/reminder-settings', { key: org.apiKey, body: reminderSettingsBody(opts.settings) });
      assert.equal(res.status, 200, res.raw);
    }
    const cust = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Afdrag ApS', email: 'bogholderi@afdrag.example' } });
    assert.equal(cust.status, 201, cust.raw);
    const res = await call(t.app, 'POST', `/v1/invoices${opts.draft ? '' : '?issue=true'}`, {
      key: org.apiKey,
      body: { customerId: cust.body.data.id, lines: [line(opts.grossOere ?? 120_000)], paymentTermsDays: 14 },
    });
    assert.equal(res.status, 201, res.raw);
    return { org, invoiceId: res.body.data.id, customerId: cust.body.data.id, dueDate: res.body.data.dueDate };
  };
  const createPlan = (inv: Inv, body: unknown, key = inv.org.apiKey) => call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/payment-plan`, { key, body });
  const getPlan = (inv: Inv, key = inv.org.apiKey) => call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}/payment-plan`, { key });
  const cancelPlan = (inv: Inv) => call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/payment-plan/cancel`, { key: inv.org.apiKey });
  const pay = async (inv: Inv, amountOere: number) => {
    const res = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/payments`, { key: inv.org.apiKey, body: { amountOere, paymentDate: await today(inv.org) } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data;
  };
  const getInvoice = async (inv: Inv) => (await call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}`, { key: inv.org.apiKey })).body.data;
  const events = async (inv: Inv) => [...await sql()<{ type: string; entity_family: string; entity_id: string; data: Record<string, unknown> }[]>`
    SELECT type, entity_family, entity_id, data FROM events WHERE organization_id = ${inv.org.organizationId} AND type LIKE 'payment_plan.%' ORDER BY id`];
  const timelineCodes = async (inv: Inv) =>
    ((await call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}/timeline?limit=100`, { key: inv.org.apiKey })).body.data as { code: string; data: Record<string, unknown> }[])
      .filter((e) => e.code.startsWith('payment_plan.'));
  /** Three instalments of the invoice's balance from `first` on, a month apart (the last takes the rest). */
  const threeOf = (first: string, total: number) => [
    { dueDate: first, amountOere: Math.floor(total / 3) },
    { dueDate: addDays(first, 30), amountOere: Math.floor(total / 3) },
    { dueDate: addDays(first, 60), amountOere: total - 2 * Math.floor(total / 3) },
  ];

  it('makes a plan: 201, Location, the plan with open instalments, payment_plan.created and its timeline entry @cluster', async () => {
    const inv = await newInvoice();
    const now = await today(inv.org);
    const res = await createPlan(inv, { installments: threeOf(addDays(now, 5), 120_000) });
    assert.equal(res.status, 201, res.raw);
    assert.equal(res.headers.location, `/v1/invoices/${inv.invoiceId}/payment-plan`);
    const plan = res.body.data;
    assert.deepEqual(Object.keys(plan), ['id', 'invoiceId', 'status', 'waiveInterest', 'installments', 'createdAt', 'endedAt']);
    assert.deepEqual([plan.invoiceId, plan.status, plan.waiveInterest, plan.endedAt], [inv.invoiceId, 'active', false, null]);
    assert.deepEqual(plan.installments, [
      { number: 1, dueDate: addDays(now, 5), amountOere: 40_000, paidOere: 0, status: 'open' },
      { number: 2, dueDate: addDays(now, 35), amountOere: 40_000, paidOere: 0, status: 'open' },
      { number: 3, dueDate: addDays(now, 65), amountOere: 40_000, paidOere: 0, status: 'open' },
    ]);
    const got = await getPlan(inv);
    assert.equal(got.status, 200, got.raw);
    assert.deepEqual(got.body.data, plan);
    assert.deepEqual(await events(inv), [
      { type: 'payment_plan.created', entity_family: 'invoice', entity_id: inv.invoiceId, data: { paymentPlanId: plan.id, invoiceId: inv.invoiceId, customerId: inv.customerId } },
    ]);
    assert.deepEqual((await timelineCodes(inv)).map((e) => [e.code, e.data]), [['payment_plan.created', { paymentPlanId: plan.id }]]);
    // The invoice's status stays as it was.
    assert.equal((await getInvoice(inv)).status, 'issued');
  });

  it('payments fill the instalments in order; late the day after its due date; paying every one completes the plan (and the invoice)', async () => {
    const inv = await newInvoice();
    const now = await today(inv.org);
    const plan = (await createPlan(inv, { installments: threeOf(now, 120_000) })).body.data;
    await pay(inv, 50_000);
    await advance(inv.org, 1);
    let read = (await getPlan(inv)).body.data;
    assert.deepEqual(read.installments.map((i: { paidOere: number; status: string }) => [i.paidOere, i.status]), [[40_000, 'paid'], [10_000, 'open'], [0, 'open']]);
    await advance(inv.org, 30);
    read = (await getPlan(inv)).body.data;
    assert.deepEqual(read.installments.map((i: { status: string }) => i.status), ['paid', 'late', 'open']);
    await pay(inv, 70_000);
    read = (await getPlan(inv)).body.data;
    assert.equal(read.status, 'completed');
    assert.ok(read.endedAt);
    assert.deepEqual(read.installments.map((i: { status: string }) => i.status), ['paid', 'paid', 'paid']);
    assert.equal((await getInvoice(inv)).status, 'paid');
    assert.deepEqual((await events(inv)).map((e) => e.type), ['payment_plan.created', 'payment_plan.completed']);
    assert.deepEqual((await timelineCodes(inv)).map((e) => e.code), ['payment_plan.created', 'payment_plan.completed']);
    // Ended: cancel is an invalid transition; a new plan is refused as there is nothing left to pay.
    assertError(await cancelPlan(inv), 422, 'invalid_transition');
    assertError(await createPlan(inv, { installments: threeOf(await today(inv.org), 120_000) }), 422, 'invoice_already_paid');
    assert.equal((await getPlan(inv)).body.data.id, plan.id);
  });

  it('cancel: cancelled with endedAt, payment_plan.cancelled; dunning is listed due at once; a second cancel is invalid_transition', async () => {
    const inv = await newInvoice();
    await createPlan(inv, { installments: threeOf(await today(inv.org), 120_000) });
    const res = await cancelPlan(inv);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.status, 'cancelled');
    assert.ok(res.body.data.endedAt);
    assert.deepEqual((await events(inv)).map((e) => e.type), ['payment_plan.created', 'payment_plan.cancelled']);
    const [wake] = await sql()<{ due: boolean }[]>`
      SELECT due_at <= business_now(organization_id) AS due FROM wake_index WHERE organization_id = ${inv.org.organizationId} AND service = 'Dunning'`;
    assert.equal(wake?.due, true);
    assertError(await cancelPlan(inv), 422, 'invalid_transition');
    // A new plan may be made once the last one ended.
    assert.equal((await createPlan(inv, { installments: threeOf(await today(inv.org), 120_000) })).status, 201);
  });

  describe('refusals', () => {
    it('400 validation_failed at the pointer: too few, too many, an amount under 1 kr, dates out of order, a date before today', async () => {
      const inv = await newInvoice();
      const now = await today(inv.org);
      const cases: [unknown, string][] = [
        [{ installments: [{ dueDate: now, amountOere: 120_000 }] }, '/installments'],
        [{ installments: Array.from({ length: 25 }, (_, k) => ({ dueDate: addDays(now, k), amountOere: 4_800 })) }, '/installments'],
        [{ installments: [{ dueDate: now, amountOere: 119_901 }, { dueDate: addDays(now, 1), amountOere: 99 }] }, '/installments/1/amountOere'],
        [{ installments: [{ dueDate: now, amountOere: 40_000 }, { dueDate: addDays(now, 9), amountOere: 40_000 }, { dueDate: addDays(now, 9), amountOere: 40_000 }] }, '/installments/2/dueDate'],
        [{ installments: [{ dueDate: addDays(now, -1), amountOere: 60_000 }, { dueDate: addDays(now, 9), amountOere: 60_000 }] }, '/installments/0/dueDate'],
        [{ installments: [{ dueDate: now, amountOere: 60_000 }, { dueDate: addDays(now, 9), amountOere: 60_000 }], waiveInterest: 'yes' }, '/waiveInterest'],
      ];
      for (const [body, pointer] of cases) {
        const res = await createPlan(inv, body);
        assertError(res, 400, 'validation_failed');
        assert.ok(res.body.error.details.some((d: { path: string }) => d.path === pointer), `${pointer}: ${res.raw}`);
      }
      assertError(await getPlan(inv), 404, 'payment_plan_not_found');
    });

    it('404 invoice_not_found for an unknown or another organisation\'s invoice; 404 payment_plan_not_found for none yet', async () => {
      const inv = await newInvoice();
      const other = await createTestOrg();
      const stranger = { ...inv, org: other };
      assertError(await createPlan(stranger, { installments: threeOf(await today(inv.org), 120_000) }), 404, 'invoice_not_found');
      assertError(await getPlan(stranger), 404, 'invoice_not_found');
      assertError(await cancelPlan(stranger), 404, 'invoice_not_found');
      assertError(await getPlan({ ...inv, invoiceId: '0190f000-0000-7000-8000-000000000000' }), 404, 'invoice_not_found');
      assertError(await getPlan(inv), 404, 'payment_plan_not_found');
      assertError(await cancelPlan(inv), 404, 'payment_plan_not_found');
    });

    it('422 invoice_not_issued (a draft), invoice_already_paid, invoice_in_collections; 409 payment_plan_exists', async () => {
      const draft = await newInvoice({ draft: true });
      assertError(await createPlan(draft, { installments: threeOf(await today(draft.org), 120_000) }), 422, 'invoice_not_issued');
      const paid = await newInvoice();
      await pay(paid, 120_000);
      assertError(await createPlan(paid, { installments: threeOf(await today(paid.org), 120_000) }), 422, 'invoice_already_paid');
      const collected = await newInvoice({ settings: { maxReminders: 1 } });
      await advance(collected.org, 15);
      assert.equal((await call(t.app, 'POST', `/v1/invoices/${collected.invoiceId}/reminders`, { key: collected.org.apiKey })).status, 200);
      const c = await call(t.app, 'POST', `/v1/invoices/${collected.invoiceId}/collect`, { key: collected.org.apiKey });
      assert.equal(c.status, 201, c.raw);
      assertError(await createPlan(collected, { installments: threeOf(await today(collected.org), 130_000) }), 422, 'invoice_in_collections');
      const twice = await newInvoice();
      assert.equal((await createPlan(twice, { installments: threeOf(await today(twice.org), 120_000) })).status, 201);
      assertError(await createPlan(twice, { installments: threeOf(await today(twice.org), 120_000) }), 409, 'payment_plan_exists');
    });

    it('422 installments_total_mismatch with expectedOere, nothing recorded', async () => {
      const inv = await newInvoice();
      const res = await createPlan(inv, { installments: threeOf(await today(inv.org), 119_999) });
      assertError(res, 422, 'installments_total_mismatch');
      assert.deepEqual(res.body.error.details, [{ path: '/installments', message: res.body.error.details[0].message, expectedOere: 120_000 }]);
      assertError(await getPlan(inv), 404, 'payment_plan_not_found');
      assert.deepEqual(await events(inv), []);
    });

    it('scopes: invoices:write to make and cancel, invoices:read to read', async () => {
      const inv = await newInvoice();
      const reader = await createTestKey(inv.org, ['invoices:read']);
      assertError(await createPlan(inv, { installments: threeOf(await today(inv.org), 120_000) }, reader), 403, 'insufficient_scope');
      assertError(await getPlan(inv, await createTestKey(inv.org, ['customers:read'])), 403, 'insufficient_scope');
      assertError(await getPlan(inv, reader), 404, 'payment_plan_not_found');
    });
  });

  it('while active: collect and a manual reminder are 422 payment_plan_active, and the dunning step takes nothing but waits for the break day', async () => {
    const inv = await newInvoice({ settings: { maxReminders: 1 } });
    await advance(inv.org, 15);
    const now = await today(inv.org);
    await createPlan(inv, { installments: threeOf(now, 120_000) });
    assertError(await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/collect`, { key: inv.org.apiKey }), 422, 'payment_plan_active');
    assertError(await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/reminders`, { key: inv.org.apiKey }), 422, 'payment_plan_active');
    const step = await takeDueDunningStep(testDb().db, inv.org.organizationId, inv.invoiceId);
    assert.deepEqual([step.kind, step.kind === 'wait' ? step.date : null], ['wait', addDays(now, 10)]);
    const [reminders] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM reminders WHERE invoice_id = ${inv.invoiceId}`;
    assert.equal(reminders!.n, 0);
    // Ten days after the first instalment's due date, unpaid: the step breaks the plan, then takes reminder 1 that day.
    await advance(inv.org, 10);
    const broken = await takeDueDunningStep(testDb().db, inv.org.organizationId, inv.invoiceId);
    assert.deepEqual([broken.kind, broken.kind === 'plan_broken' ? broken.date : null], ['plan_broken', addDays(now, 10)]);
    const plan = (await getPlan(inv)).body.data;
    assert.deepEqual([plan.status, plan.installments[0].status], ['broken', 'late']);
    assert.deepEqual((await events(inv)).map((e) => e.type), ['payment_plan.created', 'payment_plan.broken']);
    const next = await takeDueDunningStep(testDb().db, inv.org.organizationId, inv.invoiceId);
    assert.equal(next.kind, 'deliver');
    const [taken] = await sql()<{ sent_on: string; reminder_number: number }[]>`SELECT sent_on::text, reminder_number FROM reminders WHERE invoice_id = ${inv.invoiceId}`;
    assert.deepEqual([taken!.reminder_number, taken!.sent_on], [1, addDays(now, 10)]);
  });

  it('a credit note cancels the active plan', async () => {
    const inv = await newInvoice();
    await createPlan(inv, { installments: threeOf(await today(inv.org), 120_000) });
    const res = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/credit`, { key: inv.org.apiKey, body: { reason: 'Fejlfaktureret' } });
    assert.equal(res.status, 201, res.raw);
    assert.equal((await getPlan(inv)).body.data.status, 'cancelled');
    assert.deepEqual((await events(inv)).map((e) => e.type), ['payment_plan.created', 'payment_plan.cancelled']);
  });

  it('posts the accrued interest first and asks for it in the total; with waiveInterest nothing accrues while active, and accrues again once cancelled', async () => {
    const inv = await newInvoice({ settings: { lateInterest: 'statutory' } });
    await advance(inv.org, 14 + 20);
    const before = await getInvoice(inv);
    assert.ok(before.interestAccruedOere > 0, JSON.stringify(before));
    const expected = before.balanceOere + before.interestAccruedOere;
    const wrong = await createPlan(inv, { installments: threeOf(await today(inv.org), before.balanceOere), waiveInterest: true });
    assertError(wrong, 422, 'installments_total_mismatch');
    assert.equal(wrong.body.error.details[0].expectedOere, expected);
    assert.equal((await getInvoice(inv)).interestOere, 0);
    const made = await createPlan(inv, { installments: threeOf(await today(inv.org), expected), waiveInterest: true });
    assert.equal(made.status, 201, made.raw);
    let read = await getInvoice(inv);
    assert.deepEqual([read.interestOere, read.interestAccruedOere, read.balanceOere], [before.interestAccruedOere, 0, expected]);
    await advance(inv.org, 9);
    read = await getInvoice(inv);
    assert.deepEqual([read.interestAccruedOere, read.balanceOere], [0, expected]);
    assert.equal((await cancelPlan(inv)).status, 200);
    await advance(inv.org, 5);
    // Cancelled on the day it was cancelled: that day and the 5 after accrue (6 days), the 8 days between do not.
    read = await getInvoice(inv);
    const perDay = Math.round((120_000 * 975) / 10_000 / 365);
    assert.ok(read.interestAccruedOere > 0 && Math.abs(read.interestAccruedOere - 6 * perDay) <= 6, JSON.stringify(read));
  });
});
