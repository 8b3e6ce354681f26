import assert from 'node:assert/strict';
import { call, type CallOptions } from '../helpers/context.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { startScenario, type Scenario } from '../helpers/scenario.ts';
import { addDays, addIntervals, daysBetween } from '../../services/subscriptions/period-math.ts';

/**
 * Subscriptions on a sandbox clock, through the public API and the real engine: the SubscriptionSchedule runs each
 * period on its own start date when the clock passes it, one invoice per period, oldest first.
 */
describe('scenario: subscriptions', function () {
  this.timeout(180_000);
  let s: Scenario;
  let customerId: string;
  const api = (method: string, url: string, opts: CallOptions = {}) => call(s.api.app, method, url, { key: s.org.apiKey, ...opts });

  before(async () => {
    s = await startScenario();
    customerId = await s.customer({ type: 'company', name: 'Abonnent ApS', cvr: '11223344' });
    // No reminders: these stories are about the periods (the dunning of period invoices is the invoices' own).
    const settings = await api('PUT', '/v1/reminder-settings', { body: reminderSettingsBody({ maxReminders: 0 }) });
    assert.equal(settings.status, 200, settings.raw);
  });
  after(() => s?.close());

  const create = async (over: Record<string, unknown>) => {
    const res = await api('POST', '/v1/subscriptions', {
      body: { customerId, name: 'Hosting', interval: { unit: 'month', count: 1 }, dueDays: 10, autoSend: false, lines: [{ description: 'Server', quantity: 1, unitPriceOere: 10000 }], ...over },
    });
    assert.equal(res.status, 201, res.raw);
    await s.settle();
    return res.body.data as { id: string };
  };
  const invoicesOf = async (id: string) => {
    const res = await api('GET', `/v1/subscriptions/${id}/invoices?limit=100`);
    assert.equal(res.status, 200, res.raw);
    return (res.body.data as { periodStart: string; periodEnd: string; issueDate: string; dueDate: string; status: string; number: number }[]).reverse();
  };
  const advanceTo = async (date: string) => {
    const today = await s.today();
    if (date > today) await s.advance(daysBetween(today, date));
  };

  it('monthly from the 31st for 14 months: starts clamp to the month end, one invoice per period on its own start date', async () => {
    const today = await s.today();
    const start = `${Number(today.slice(0, 4)) + 1}-01-31`;
    const sub = await create({ startDate: start });
    assert.equal((await invoicesOf(sub.id)).length, 0);
    const starts = Array.from({ length: 14 }, (_, k) => addIntervals(start, { unit: 'month', count: 1 }, k));
    assert.deepEqual(starts.slice(0, 4).map((d) => d.slice(5)), ['01-31', Number(start.slice(0, 4)) % 4 === 0 ? '02-29' : '02-28', '03-31', '04-30']);
    // The first start, one day at a time around it, then big advances that pass several starts each.
    await advanceTo(addDays(start, -1));
    assert.equal((await invoicesOf(sub.id)).length, 0);
    await s.advance(1);
    assert.equal((await invoicesOf(sub.id)).length, 1);
    await advanceTo(starts[5]!);
    await advanceTo(starts[13]!);
    const invoices = await invoicesOf(sub.id);
    assert.deepEqual(invoices.map((i) => i.periodStart), starts);
    for (const [k, inv] of invoices.entries()) {
      assert.equal(inv.issueDate, starts[k]);
      assert.equal(inv.dueDate, addDays(starts[k]!, 10));
      assert.equal(inv.periodEnd, addDays(addIntervals(start, { unit: 'month', count: 1 }, k + 1), -1));
      assert.equal(inv.status === 'issued' || inv.status === 'overdue', true, inv.status);
    }
    // Numbers follow the periods (oldest first).
    assert.deepEqual(invoices.map((i) => i.number), [...invoices.map((i) => i.number)].sort((a, b) => a - b));
    const got = (await api('GET', `/v1/subscriptions/${sub.id}`)).body.data;
    assert.equal(got.nextInvoiceDate, addIntervals(start, { unit: 'month', count: 1 }, 14));
    assert.equal(got.invoiceCount, 14);
    assert.equal(got.periodsBehind, 0);
    await api('POST', `/v1/subscriptions/${sub.id}/cancel`);
  });

  it('a past start catches up at once: one invoice per missed period, oldest first, issued on the day of creation', async () => {
    const today = await s.today();
    const start = addDays(today, -20);
    const sub = await create({ startDate: start, interval: { unit: 'week', count: 1 } });
    const invoices = await invoicesOf(sub.id);
    assert.deepEqual(invoices.map((i) => i.periodStart), [start, addDays(start, 7), addDays(start, 14)]);
    assert.deepEqual(invoices.map((i) => i.issueDate), [today, today, today]);
    assert.deepEqual(invoices.map((i) => i.number), [...invoices.map((i) => i.number)].sort((a, b) => a - b));
    // Weekly from then on, each on its own start.
    await s.advance(14);
    const later = await invoicesOf(sub.id);
    assert.deepEqual(later.slice(3).map((i) => [i.periodStart, i.issueDate]), [[addDays(start, 21), addDays(start, 21)], [addDays(start, 28), addDays(start, 28)]]);
    await api('POST', `/v1/subscriptions/${sub.id}/cancel`);
  });

  it('pause across two periods, then resume: the skipped periods are not billed', async () => {
    const today = await s.today();
    const start = addDays(today, 1);
    const sub = await create({ startDate: start, interval: { unit: 'week', count: 1 } });
    await s.advance(1);
    assert.equal((await invoicesOf(sub.id)).length, 1);
    assert.equal((await api('POST', `/v1/subscriptions/${sub.id}/pause`)).status, 200);
    await s.advance(15);
    assert.equal((await invoicesOf(sub.id)).length, 1);
    const resumed = await api('POST', `/v1/subscriptions/${sub.id}/resume`);
    assert.equal(resumed.status, 200, resumed.raw);
    assert.equal(resumed.body.data.nextInvoiceDate, addDays(start, 21));
    await s.settle();
    await s.advance(6);
    assert.deepEqual((await invoicesOf(sub.id)).map((i) => i.periodStart), [start, addDays(start, 21)]);
    await api('POST', `/v1/subscriptions/${sub.id}/cancel`);
  });

  it('an end date: the last period is invoiced, then subscription.ended once', async () => {
    const today = await s.today();
    const start = addDays(today, 1);
    const sub = await create({ startDate: start, interval: { unit: 'week', count: 1 }, endDate: addDays(start, 10) });
    await s.advance(30);
    assert.deepEqual((await invoicesOf(sub.id)).map((i) => i.periodStart), [start, addDays(start, 7)]);
    const got = (await api('GET', `/v1/subscriptions/${sub.id}`)).body.data;
    assert.equal(got.status, 'cancelled');
    assert.notEqual(got.endedAt, null);
    const types = (await s.api.deps.db.sql<{ type: string }[]>`SELECT type FROM events WHERE entity_id = ${sub.id} ORDER BY sekvensnummer`).map((e) => e.type);
    assert.deepEqual(types, ['subscription.created', 'subscription.invoiced', 'subscription.invoiced', 'subscription.ended']);
  });

  it('autoSend mails each period invoice through the SMTP server', async () => {
    const mailed = await s.customer({ type: 'company', name: 'Post ApS', email: 'bogholderi@post.dk' });
    const before = s.mails().length;
    const today = await s.today();
    const sub = await create({ customerId: mailed, startDate: addDays(today, 1), interval: { unit: 'week', count: 1 }, autoSend: true });
    await s.advance(8);
    const invoices = await invoicesOf(sub.id);
    assert.equal(invoices.length, 2);
    const mails = s.mails().slice(before);
    assert.equal(mails.length, 2);
    for (const m of mails) assert.match(m, /bogholderi@post\.dk/);
    await api('POST', `/v1/subscriptions/${sub.id}/cancel`);
  });
});
