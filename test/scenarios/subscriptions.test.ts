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

  // First: the clock only moves forward, and this walk needs a 29 February still ahead (29 Feb 2028 on today's date).
  it('yearly from 29 February over five years: 28 February in common years, 29 February again in the next leap year', async () => {
    const today = await s.today();
    let y = Number(today.slice(0, 4));
    while (!(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)) || `${y}-02-29` <= today) y++;
    const start = `${y}-02-29`;
    const yearly = { unit: 'year', count: 1 } as const;
    const sub = await create({ startDate: start, interval: yearly });
    const starts = [start, `${y + 1}-02-28`, `${y + 2}-02-28`, `${y + 3}-02-28`, `${y + 4}-02-29`];
    assert.deepEqual(starts, Array.from({ length: 5 }, (_, k) => addIntervals(start, yearly, k)));
    const ends = [`${y + 1}-02-27`, `${y + 2}-02-27`, `${y + 3}-02-27`, `${y + 4}-02-28`, `${y + 5}-02-27`];
    // Each start: nothing the day before, its invoice on the day.
    for (const [k, d] of starts.entries()) {
      await advanceTo(addDays(d, -1));
      assert.equal((await invoicesOf(sub.id)).length, k, `before ${d}`);
      await s.advance(1);
      assert.equal((await invoicesOf(sub.id)).length, k + 1, `on ${d}`);
    }
    const invoices = await invoicesOf(sub.id);
    assert.deepEqual(invoices.map((i) => [i.periodStart, i.periodEnd, i.issueDate, i.dueDate]), starts.map((d, k) => [d, ends[k], d, addDays(d, 10)]));
    assert.deepEqual(invoices.map((i) => i.number), [...invoices.map((i) => i.number)].sort((a, b) => a - b));
    const got = (await api('GET', `/v1/subscriptions/${sub.id}`)).body.data;
    assert.equal(got.nextInvoiceDate, `${y + 5}-02-28`);
    assert.equal(got.invoiceCount, 5);
    assert.equal(got.periodsBehind, 0);
    assert.deepEqual(
      [got.latestInvoice.periodStart, got.latestInvoice.periodEnd, got.latestInvoice.issueDate],
      [`${y + 4}-02-29`, `${y + 5}-02-27`, `${y + 4}-02-29`],
    );
    await api('POST', `/v1/subscriptions/${sub.id}/cancel`);
  });

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

  it('weekly for six weeks: one invoice per week, each on its own start date, nothing in between', async () => {
    const today = await s.today();
    const start = addDays(today, 3);
    const sub = await create({ startDate: start, interval: { unit: 'week', count: 1 } });
    const starts = Array.from({ length: 6 }, (_, k) => addDays(start, 7 * k));
    for (const [k, d] of starts.entries()) {
      await advanceTo(addDays(d, -1));
      assert.equal((await invoicesOf(sub.id)).length, k, `before ${d}`);
      await s.advance(1);
      assert.equal((await invoicesOf(sub.id)).length, k + 1, `on ${d}`);
    }
    // Two days into the sixth week: still six.
    await s.advance(2);
    const invoices = await invoicesOf(sub.id);
    assert.deepEqual(
      invoices.map((i) => [i.periodStart, i.periodEnd, i.issueDate, i.dueDate]),
      starts.map((d) => [d, addDays(d, 6), d, addDays(d, 10)]),
    );
    assert.deepEqual(invoices.map((i) => i.number), [...invoices.map((i) => i.number)].sort((a, b) => a - b));
    const got = (await api('GET', `/v1/subscriptions/${sub.id}`)).body.data;
    assert.deepEqual([got.nextInvoiceDate, got.invoiceCount, got.periodsBehind], [addDays(start, 42), 6, 0]);
    await api('POST', `/v1/subscriptions/${sub.id}/cancel`);
  });

  it('PATCH of the lines and of the interval mid-way: future periods only, the preview is the invoice then issued', async () => {
    type Preview = { date: string; periodStart: string; periodEnd: string; lines: Record<string, unknown>[]; netOere: number; vatOere: number; grossOere: number };
    type Full = { id: string; issueDate: string; periodStart: string; periodEnd: string; lines: Record<string, unknown>[]; netOere: number; vatOere: number; grossOere: number };
    const preview = async (id: string) => {
      const res = await api('GET', `/v1/subscriptions/${id}/next_invoice`);
      assert.equal(res.status, 200, res.raw);
      return res.body.data as Preview;
    };
    const full = async (id: string) => {
      const res = await api('GET', `/v1/invoices/${id}`);
      assert.equal(res.status, 200, res.raw);
      return res.body.data as Full;
    };
    const allFull = async (subId: string) => {
      const list = (await api('GET', `/v1/subscriptions/${subId}/invoices?limit=100`)).body.data as { id: string }[];
      return Promise.all(list.reverse().map((i) => full(i.id)));
    };
    // The invoice as the preview describes it.
    const asPreview = (inv: Full): Preview => ({
      date: inv.issueDate,
      periodStart: inv.periodStart,
      periodEnd: inv.periodEnd,
      lines: inv.lines.map((l) => ({
        description: l.description,
        quantity: l.quantity,
        unitPriceOere: l.unitPriceOere,
        vatRateBps: l.vatRateBps,
        vatExemptionReason: l.vatExemptionReason,
        netOere: l.netOere,
        vatOere: l.vatOere,
        grossOere: l.grossOere,
      })),
      netOere: inv.netOere,
      vatOere: inv.vatOere,
      grossOere: inv.grossOere,
    });
    // An issued invoice's content, without what the clock may change (its status once past due).
    const strip = ({ status: _s, balanceOere: _b, ...rest }: Full & { status?: string; balanceOere?: number }) => rest;
    const month = { unit: 'month', count: 1 } as const;
    const today = await s.today();
    const start = addDays(today, 2);
    const sub = await create({ startDate: start, interval: month });

    // Period 0 as created.
    const p0 = await preview(sub.id);
    await advanceTo(start);
    let issued = await allFull(sub.id);
    assert.equal(issued.length, 1);
    assert.deepEqual(asPreview(issued[0]!), p0);
    const first = issued[0]!;

    // New lines from period 1 on; the period keeps its dates.
    const newLines = [
      { description: 'Server (stor)', quantity: 2, unitPriceOere: 15_000 },
      { description: 'Backup', quantity: 1.5, unitPriceOere: 3_333, vatRateBps: 2500 },
    ];
    const patched = await api('PATCH', `/v1/subscriptions/${sub.id}`, { body: { lines: newLines } });
    assert.equal(patched.status, 200, patched.raw);
    assert.equal(patched.body.data.nextInvoiceDate, addIntervals(start, month, 1));
    await s.settle();
    const p1 = await preview(sub.id);
    assert.deepEqual([p1.date, p1.periodStart, p1.periodEnd], [addIntervals(start, month, 1), addIntervals(start, month, 1), addDays(addIntervals(start, month, 2), -1)]);
    assert.deepEqual(p1.lines.map((l) => l.description), ['Server (stor)', 'Backup']);
    await advanceTo(p1.periodStart);
    issued = await allFull(sub.id);
    assert.equal(issued.length, 2);
    assert.deepEqual(strip(issued[0]!), strip(first));
    assert.deepEqual(asPreview(issued[1]!), p1);
    const second = issued[1]!;

    // Every two weeks from period 2 on: period 2 keeps its date, later periods follow the new interval from it.
    const p2Start = addIntervals(start, month, 2);
    const changed = await api('PATCH', `/v1/subscriptions/${sub.id}`, { body: { interval: { unit: 'week', count: 2 } } });
    assert.equal(changed.status, 200, changed.raw);
    assert.equal(changed.body.data.nextInvoiceDate, p2Start);
    assert.deepEqual(changed.body.data.interval, { unit: 'week', count: 2 });
    await s.settle();
    const p2 = await preview(sub.id);
    assert.deepEqual([p2.date, p2.periodStart, p2.periodEnd], [p2Start, p2Start, addDays(p2Start, 13)]);
    assert.deepEqual(p2.lines, p1.lines);
    await advanceTo(p2Start);
    issued = await allFull(sub.id);
    assert.equal(issued.length, 3);
    assert.deepEqual(asPreview(issued[2]!), p2);
    const p3 = await preview(sub.id);
    assert.deepEqual([p3.date, p3.periodStart, p3.periodEnd], [addDays(p2Start, 14), addDays(p2Start, 14), addDays(p2Start, 27)]);
    await advanceTo(addDays(p2Start, 28));
    issued = await allFull(sub.id);
    assert.deepEqual(
      issued.map((i) => [i.periodStart, i.periodEnd, i.issueDate]),
      [
        [start, addDays(addIntervals(start, month, 1), -1), start],
        [addIntervals(start, month, 1), addDays(p2Start, -1), addIntervals(start, month, 1)],
        [p2Start, addDays(p2Start, 13), p2Start],
        [addDays(p2Start, 14), addDays(p2Start, 27), addDays(p2Start, 14)],
        [addDays(p2Start, 28), addDays(p2Start, 41), addDays(p2Start, 28)],
      ],
    );
    assert.deepEqual(asPreview(issued[3]!), p3);
    // What was issued before the changes is as it was.
    assert.deepEqual(strip(issued[0]!), strip(first));
    assert.deepEqual(strip(issued[1]!), strip(second));
    assert.deepEqual(issued[0]!.lines.map((l) => l.description), ['Server']);
    await api('POST', `/v1/subscriptions/${sub.id}/cancel`);
  });
});
