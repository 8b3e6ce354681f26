import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { takeDueDunningStep } from '../../services/reminders/take-due-dunning-step.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/**
 * The same claims give the same letters (docs/reminders.md, "One customer's steps in a fixed order"): a customer's
 * due reminder steps are taken by date, then the oldest due date, then the lowest invoice number, whatever order the
 * invoices' lifecycles wake in. The engine's step (`take-step`, services/reminders/take-due-dunning-step.ts) is driven
 * here as the Dunning object drives it, one invoice's wake at a time, in an order the test chooses: the order in which
 * wakes happen is exactly what the engine does not control. Rendering and delivery are stood in for (a reminder is
 * marked documented and delivered before its invoice's next step, as the workflow does).
 */
describe('dunning order: one customer, the same letters whatever order the invoices wake in', function () {
  this.timeout(300_000);
  let t: TestApp;
  const db = () => testDb().db;

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const ok = (res: { status: number; raw: string }, status: number) => assert.equal(res.status, status, res.raw);

  async function customer(org: TestOrg, n: number): Promise<string> {
    const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: `Kunde ${n} A/S`, cvr: '87654321', email: `bogholderi-${n}@kunde.dk` } });
    ok(res, 201);
    return res.body.data.id;
  }
  async function issue(org: TestOrg, customerId: string, paymentTermsDays: number): Promise<{ id: string; number: number; dueDate: string }> {
    const lines = [{ description: 'Rådgivning', quantity: 1, unitPriceOere: 100_000, vatRateBps: 2500 }];
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines, paymentTermsDays } });
    ok(res, 201);
    return res.body.data;
  }
  async function advance(org: TestOrg, days: number): Promise<void> {
    ok(await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days } }), 200);
  }

  /** What the workflow does after a step hands a reminder back: its document, then its delivery (stood in for). */
  async function documentAndDeliver(reminderId: string): Promise<void> {
    const sha = createHash('sha256').update(reminderId).digest();
    await db().sql`UPDATE reminders SET document_sha256 = ${sha} WHERE id = ${reminderId} AND document_sha256 IS NULL`;
    await db().sql`UPDATE reminders SET delivery = 'done', delivered_at = now(), message_id = ${`reminder-${reminderId}@faktura.invalid`} WHERE id = ${reminderId} AND delivery = 'pending'`;
  }

  /** One wake of an invoice's Dunning object: every step due, until it waits or ends. Answers the steps it took. */
  async function wake(org: TestOrg, invoiceId: string): Promise<number> {
    for (let i = 0; ; i++) {
      const s = await takeDueDunningStep(db(), org.organizationId, invoiceId);
      if (s.kind === 'done' || s.kind === 'wait') return i;
      if (s.kind === 'deliver') await documentAndDeliver(s.reminderId);
    }
  }

  /** Wakes the invoices in the order `order` gives, round after round, until a round takes nothing. */
  async function wakeAll(org: TestOrg, invoiceIds: string[], order: (ids: string[]) => string[]): Promise<void> {
    for (;;) {
      let taken = 0;
      for (const id of order(invoiceIds)) taken += await wake(org, id);
      if (taken === 0) return;
    }
  }

  /** Every reminder of the organisation, per invoice number: type, number, fee, dates relative to the due date. */
  async function histories(org: TestOrg): Promise<Record<string, [string, number | null, number, number, boolean, string][]>> {
    const rows = await db().sql<{ invoice_number: number; due: string; type: string; reminder_number: number | null; fee_oere: number; sent_on: string; demand_letter: boolean; status: string }[]>`
      SELECT i.number AS invoice_number, i.due_date::text AS due, r.type, r.reminder_number, r.fee_oere, r.sent_on::text AS sent_on, r.demand_letter, r.status
      FROM reminders r JOIN invoices i ON i.id = r.invoice_id
      WHERE r.organization_id = ${org.organizationId} ORDER BY i.number, r.sent_on, r.reminder_number NULLS FIRST`;
    const days = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000);
    const out: Record<string, [string, number | null, number, number, boolean, string][]> = {};
    for (const r of rows) (out[`#${r.invoice_number}`] ??= []).push([r.type, r.reminder_number, r.fee_oere, days(r.due, r.sent_on), r.demand_letter, r.status]);
    return out;
  }

  it('five invoices due the same day, fees for three: the three lowest numbers get them, woken in issue order day by day or in reverse after one jump', async () => {
    const run = async (order: (ids: string[]) => string[], dayByDay: boolean) => {
      const org = await createTestOrg({ name: 'Rækkefølge ApS' });
      const c = await customer(org, 1);
      const invoices = [];
      for (let i = 0; i < 5; i++) invoices.push(await issue(org, c, 14));
      assert.deepEqual(new Set(invoices.map((i) => i.dueDate)).size, 1);
      const ids = invoices.map((i) => i.id);
      if (dayByDay) {
        for (let d = 0; d < 14 + 30; d++) {
          await advance(org, 1);
          await wakeAll(org, ids, order);
        }
      } else {
        await advance(org, 14 + 30);
        await wakeAll(org, ids, order);
      }
      return { org, invoices, history: await histories(org) };
    };
    const forward = await run((ids) => ids, true);
    const reverse = await run((ids) => [...ids].reverse(), false);
    // The fees of the first reminders (due + 7) go to the oldest numbers; the fee-bearing ones' next reminder is 10
    // days later (due + 17), the others' on the cadence (due + 14); the arrears' three fees are used up by then.
    const fee = [
      ['reminder', 1, 10_000, 7, false, 'sent'],
      ['reminder', 2, 0, 17, false, 'sent'],
      ['reminder', 3, 0, 21, true, 'sent'],
    ];
    const free = [
      ['reminder', 1, 0, 7, false, 'sent'],
      ['reminder', 2, 0, 14, false, 'sent'],
      ['reminder', 3, 0, 21, true, 'sent'],
    ];
    const n = forward.invoices.map((i) => i.number);
    assert.deepEqual(forward.history, { [`#${n[0]}`]: fee, [`#${n[1]}`]: fee, [`#${n[2]}`]: fee, [`#${n[3]}`]: free, [`#${n[4]}`]: free });
    assert.deepEqual(reverse.invoices.map((i) => i.number), n, 'both organisations number alike');
    assert.deepEqual(reverse.history, forward.history);
  });

  it('on one date the older due date comes before the lower number', async () => {
    // #1 is due 10 days after #2; #2's second reminder and #1's first fall on the same day (due #2 + 17 = due #1 + 7).
    // The arrears have one fee left by then: it goes to #2 (the older due date), though #1 has the lower number.
    const run = async (order: (ids: string[]) => string[]) => {
      const org = await createTestOrg({ name: 'Forfald ApS' });
      const c = await customer(org, 1);
      const late = await issue(org, c, 24);
      const early = await issue(org, c, 14);
      const third = await issue(org, c, 14);
      await advance(org, 24 + 30);
      await wakeAll(org, [late.id, early.id, third.id], order);
      return { history: await histories(org), numbers: [late.number, early.number, third.number] };
    };
    const a = await run((ids) => ids);
    const b = await run((ids) => [...ids].reverse());
    assert.deepEqual(b.history, a.history);
    const [late, early, third] = a.numbers;
    // due + 7: #early and #third (fees 1 and 2); due + 17 = late's due + 7: early's r2 (fee 3, older due date) before late's r1 (free).
    assert.deepEqual(a.history[`#${early}`]!.map((r) => [r[1], r[2], r[3]]), [[1, 10_000, 7], [2, 10_000, 17], [3, 0, 27]]);
    assert.deepEqual(a.history[`#${third}`]!.map((r) => [r[1], r[2], r[3]]), [[1, 10_000, 7], [2, 0, 17], [3, 0, 21]]);
    assert.deepEqual(a.history[`#${late}`]!.map((r) => [r[1], r[2], r[3]]), [[1, 0, 7], [2, 0, 14], [3, 0, 21]]);
  });

  /** mulberry32: a small seeded generator, so a failing run can be repeated. */
  const rng = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
  const shuffled = (next: () => number) => (ids: string[]) => {
    const out = [...ids];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };

  it('a seeded calendar (4 customers, about 25 invoices in batches, 90 days, payments) replayed with wakes in other orders: every reminder, fee and date the same', async () => {
    const SEED = 20_261_127;
    const replay = async (wakeSeed: number) => {
      const world = rng(SEED);
      const order = shuffled(rng(wakeSeed));
      const org = await createTestOrg({ name: 'Genafspilning ApS' });
      const customers = [];
      for (let c = 0; c < 4; c++) customers.push(await customer(org, c));
      const open: { id: string; grossOere: number }[] = [];
      const all: string[] = [];
      for (let day = 0; day < 90; day++) {
        // The first 40 days: now and then a batch of 1..3 invoices to one customer with the same usual terms (so that
        // several of a customer's invoices reach a step on the same day), now and then one with odd terms.
        if (day < 40 && world() < 0.3) {
          const c = customers[Math.floor(world() * customers.length)]!;
          const terms = [7, 14, 14, 30][Math.floor(world() * 4)]!;
          const batch = 1 + Math.floor(world() * 3);
          for (let k = 0; k < batch; k++) {
            const inv = await issue(org, c, world() < 0.2 ? 1 + Math.floor(world() * 30) : terms);
            open.push({ id: inv.id, grossOere: 125_000 });
            all.push(inv.id);
          }
        }
        // Now and then a payment in full of an open invoice (ending a continuous arrears, sometimes).
        if (open.length > 0 && world() < 0.08) {
          const [paid] = open.splice(Math.floor(world() * open.length), 1);
          const balance = (await call(t.app, 'GET', `/v1/invoices/${paid!.id}`, { key: org.apiKey })).body.data.balanceOere as number;
          const today = (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today as string;
          ok(await call(t.app, 'POST', `/v1/invoices/${paid!.id}/payments`, { key: org.apiKey, body: { amountOere: balance, paymentDate: today } }), 201);
        }
        await advance(org, 1);
        // Some days the wakes come late, several days' steps at once.
        if (world() < 0.7) await wakeAll(org, all, order);
      }
      await wakeAll(org, all, order);
      return { count: all.length, history: await histories(org) };
    };
    const first = await replay(1);
    const second = await replay(2);
    const third = await replay(3);
    assert.ok(first.count >= 15, `${first.count} invoices`);
    assert.deepEqual(second.history, first.history);
    assert.deepEqual(third.history, first.history);
    // The story exercises the cap: some numbered reminder went out free while its invoice had fees left.
    const reminders = Object.values(first.history).flat().filter((r) => r[0] === 'reminder');
    assert.ok(reminders.some((r) => r[2] === 0) && reminders.some((r) => r[2] === 10_000), 'fees both charged and withheld');
  });
});
