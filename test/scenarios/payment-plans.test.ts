import assert from 'node:assert/strict';
import { addDays } from '../../services/shared/clock.ts';
import { call, testDb } from '../helpers/context.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { interestByHand } from '../helpers/interest-by-hand.ts';
import { startScenario, type Scenario } from '../helpers/scenario.ts';

/**
 * Payment plans on a sandbox clock through the whole stack (docs/reminders.md, "Payment plans"): the engine takes no
 * reminder while a plan is active; a plan paid on time completes; a plan left unpaid breaks 10 days after the
 * instalment's due date and dunning resumes with the next reminder number on max(due + cadence, previous fee + 10,
 * the break date); a cancelled plan lets dunning resume from the day it was cancelled. Interest (statutory, posted
 * at the plan's creation and at each step) is checked against a hand calculation written here.
 */
describe('scenario: payment plans pause dunning, complete, break and resume', function () {
  this.timeout(240_000);
  let s: Scenario;
  before(async () => {
    s = await startScenario({ orgName: 'Afdrag ApS' });
    const res = await call(s.api.app, 'PUT', '/v1/reminder-settings', { key: s.org.apiKey, body: reminderSettingsBody({ lateInterest: 'statutory', compensation: true }) });
    assert.equal(res.status, 200, res.raw);
  });
  after(async () => {
    await s?.close();
  });

  const byHand = interestByHand;
  const history = async (id: string) =>
    ((await call(s.api.app, 'GET', `/v1/invoices/${id}/reminders`, { key: s.org.apiKey })).body.data as { reminderNumber: number; feeOere: number; interestOere: number; sentAt: string }[]);
  const reminderDates = async (id: string) =>
    (await testDb().db.sql<{ sent_on: string; reminder_number: number; fee_oere: number }[]>`
      SELECT sent_on::text, reminder_number, fee_oere::int AS fee_oere FROM reminders WHERE invoice_id = ${id} ORDER BY sent_on`).map((r) => [r.reminder_number, r.sent_on, r.fee_oere]);
  const plan = async (id: string) => (await call(s.api.app, 'GET', `/v1/invoices/${id}/payment-plan`, { key: s.org.apiKey })).body.data;
  const makePlan = async (id: string, installments: { dueDate: string; amountOere: number }[], waiveInterest: boolean) => {
    const res = await call(s.api.app, 'POST', `/v1/invoices/${id}/payment-plan`, { key: s.org.apiKey, body: { installments, waiveInterest } });
    assert.equal(res.status, 201, res.raw);
    await s.settle();
    return res.body.data;
  };
  const planEvents = async (id: string) =>
    ((await call(s.api.app, 'GET', '/v1/events?limit=200', { key: s.org.apiKey })).body.data as { type: string; data: { invoiceId: string } }[])
      .filter((e) => e.type.startsWith('payment_plan.') && e.data.invoiceId === id)
      .map((e) => e.type);

  it('a plan left unpaid breaks 10 days after the instalment; reminders resume on the break date, then 10 days after the previous fee', async () => {
    const customerId = await s.customer({ type: 'company', name: 'Brud A/S', email: 'b@brud.dk' });
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    const due = inv.dueDate;
    await s.advance(14 + 8);
    assert.deepEqual(await reminderDates(inv.id), [[1, addDays(due, 7), 10_000]]);
    const made = addDays(due, 8);
    assert.equal(await s.today(), made);
    const read = await s.invoice(inv.id);
    const total = read.balanceOere + (read.interestAccruedOere as number);
    const p = await makePlan(inv.id, [{ dueDate: addDays(made, 5), amountOere: total - 50_000 }, { dueDate: addDays(made, 35), amountOere: 50_000 }], false);
    // Nothing is paid. Reminder 2's own day (due + 17) passes while the plan is active; it breaks on due + 13 + 10.
    await s.advance(9);
    assert.deepEqual(await reminderDates(inv.id), [[1, addDays(due, 7), 10_000]], 'no step while the plan is active');
    assert.equal((await plan(inv.id)).installments[0].status, 'late');
    await s.advance(21);
    const broken = await plan(inv.id);
    assert.deepEqual([broken.id, broken.status], [p.id, 'broken']);
    const breakDate = addDays(made, 5 + 10);
    assert.deepEqual(await reminderDates(inv.id), [
      [1, addDays(due, 7), 10_000],
      [2, breakDate, 10_000],
      // 10 days after the previous fee-bearing reminder, later than its own day (due + 27)
      [3, addDays(breakDate, 10), 10_000],
    ]);
    assert.deepEqual(await planEvents(inv.id), ['payment_plan.created', 'payment_plan.broken']);
    // Interest: posted through the plan's day when it was made; reminder 2 posts the days after it up to the break.
    const steps = await history(inv.id);
    assert.equal(steps[1]!.interestOere, await byHand(inv.grossOere, made, breakDate));
    const timeline = (await call(s.api.app, 'GET', `/v1/invoices/${inv.id}/timeline?limit=100`, { key: s.org.apiKey })).body.data as { code: string }[];
    assert.deepEqual(timeline.map((e) => e.code).filter((c) => c.startsWith('payment_plan.')), ['payment_plan.created', 'payment_plan.broken']);
  });

  it('a plan paid on time completes; no reminder is taken meanwhile and no interest accrues when it is waived', async () => {
    const customerId = await s.customer({ type: 'company', name: 'Betaler A/S', email: 'b@betaler.dk' });
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    await s.advance(14 + 8);
    const made = await s.today();
    const read = await s.invoice(inv.id);
    const total = read.balanceOere + (read.interestAccruedOere as number);
    await makePlan(inv.id, [
      { dueDate: addDays(made, 10), amountOere: 40_000 },
      { dueDate: addDays(made, 40), amountOere: 40_000 },
      { dueDate: addDays(made, 70), amountOere: total - 80_000 },
    ], true);
    for (const [days, amount] of [[10, 40_000], [30, 40_000], [30, total - 80_000]] as const) {
      await s.advance(days);
      assert.equal((await s.pay(inv.id, amount)).status, 201);
    }
    const done = await plan(inv.id);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.installments.map((i: { status: string }) => i.status), ['paid', 'paid', 'paid']);
    const after = await s.invoice(inv.id);
    assert.deepEqual([after.status, after.balanceOere], ['paid', 0]);
    assert.equal((await reminderDates(inv.id)).length, 1, 'only the reminder before the plan');
    assert.deepEqual(await planEvents(inv.id), ['payment_plan.created', 'payment_plan.completed']);
  });

  it('a cancelled plan: dunning resumes on the day of the cancel with the next reminder number', async () => {
    const customerId = await s.customer({ type: 'company', name: 'Fortryder A/S', email: 'f@fortryder.dk' });
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    const due = inv.dueDate;
    await s.advance(14 + 8);
    const made = await s.today();
    const read = await s.invoice(inv.id);
    const total = read.balanceOere + (read.interestAccruedOere as number);
    await makePlan(inv.id, [{ dueDate: addDays(made, 30), amountOere: total - 10_000 }, { dueDate: addDays(made, 60), amountOere: 10_000 }], true);
    await s.advance(12);
    assert.equal((await reminderDates(inv.id)).length, 1);
    const cancelledOn = await s.today();
    const res = await call(s.api.app, 'POST', `/v1/invoices/${inv.id}/payment-plan/cancel`, { key: s.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    await s.settle();
    assert.deepEqual(await reminderDates(inv.id), [[1, addDays(due, 7), 10_000], [2, cancelledOn, 10_000]]);
    // The waived days (after the plan was made, before it was cancelled) are not charged; the cancel day is.
    assert.equal((await history(inv.id))[1]!.interestOere, await byHand(inv.grossOere, addDays(cancelledOn, -1), cancelledOn));
    assert.deepEqual(await planEvents(inv.id), ['payment_plan.created', 'payment_plan.cancelled']);
  });
});
