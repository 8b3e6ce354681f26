import assert from 'node:assert/strict';
import { inProcessOnly, call, createTestOrg, newIdempotencyKey, startTestApp, testClock, testDb, testRenderer, type ApiResponse, type CallOptions, type TestApp, type TestOrg } from '../helpers/context.ts';
import { addDays } from '../../services/subscriptions/period-math.ts';
import type { PdfRenderer } from '../../services/documents/pdf-renderer.ts';

/** POST /v1/subscriptions/{id}/run: the next due period's invoice, one per period, under the lease. */
describe('POST /v1/subscriptions/{id}/run', () => {
  let t: TestApp;
  let org: TestOrg;
  let customerId: string;
  let mailedCustomerId: string;
  let today: string;
  const dispatched: string[] = [];
  const api = (method: string, url: string, opts: CallOptions = {}) => call(t.app, method, url, { key: org.apiKey, ...opts });

  before(async () => {
    t = await startTestApp(inProcessOnly({ mailDispatch: { dispatch: async (_org, id) => void dispatched.push(id) } }));
    org = await createTestOrg();
    customerId = (await api('POST', '/v1/customers', { body: { type: 'company', name: 'Abonnent ApS' } })).body.data.id;
    mailedCustomerId = (await api('POST', '/v1/customers', { body: { type: 'company', name: 'Post ApS', email: 'bogholderi@post.dk' } })).body.data.id;
    today = await testClock().today(org.organizationId);
  });
  after(() => t.close());

  const create = async (over: Record<string, unknown> = {}) => {
    const res = await api('POST', '/v1/subscriptions', {
      body: {
        customerId, name: 'Hosting', interval: { unit: 'month', count: 1 }, startDate: today, dueDays: 14, autoSend: false,
        lines: [{ description: 'Server', quantity: 2, unitPriceOere: 10000 }], ...over,
      },
    });
    assert.equal(res.status, 201, res.raw);
    return res.body.data;
  };
  const run = (id: string, opts: CallOptions = {}) => api('POST', `/v1/subscriptions/${id}/run`, opts);
  function assertError(res: ApiResponse, status: number, code: string): void {
    assert.equal(res.status, status, res.raw);
    assert.equal(res.body.error.code, code, res.raw);
  }
  const sql = () => testDb().db.sql;

  it('issues the due period: 201, Location, the issued invoice with its period, the receipt and the events', async () => {
    const s = await create();
    const res = await run(s.id);
    assert.equal(res.status, 201, res.raw);
    const inv = res.body.data;
    const periodEnd: string = res.body.meta.period.end;
    assert.equal(res.headers.location, `/v1/invoices/${inv.id}`);
    assert.deepEqual(res.body.meta, { period: { start: today, end: periodEnd } });
    assert.equal(periodEnd >= today, true);
    assert.equal(inv.status, 'issued');
    assert.equal(inv.subscriptionId, s.id);
    assert.equal(inv.periodStart, today);
    assert.equal(inv.periodEnd, periodEnd);
    assert.equal(inv.issueDate, today);
    assert.equal(inv.dueDate, addDays(today, 14));
    assert.equal(inv.customerId, customerId);
    assert.equal(inv.grossOere, 25000);
    assert.equal(typeof inv.number, 'number');
    assert.deepEqual((await api('GET', `/v1/invoices/${inv.id}`)).body, { data: inv, meta: {} });

    const receipts = await sql()`SELECT period_index, period_start::text, period_end::text, invoice_id FROM subscription_runs WHERE subscription_id = ${s.id}`;
    assert.deepEqual(receipts.map((r) => ({ ...r })), [{ period_index: 0, period_start: today, period_end: periodEnd, invoice_id: inv.id }]);

    const after = (await api('GET', `/v1/subscriptions/${s.id}`)).body.data;
    assert.equal(after.nextInvoiceDate, addDays(periodEnd, 1));
    assert.equal(after.invoiceCount, 1);
    assert.equal(after.periodsBehind, 0);
    assert.deepEqual(after.latestInvoice, { id: inv.id, number: inv.number, issueDate: today, periodStart: today, periodEnd });

    const events = await sql()`SELECT type, data FROM events WHERE entity_id = ${s.id} ORDER BY sekvensnummer`;
    assert.deepEqual(events.map((e) => ({ ...e })), [
      { type: 'subscription.created', data: { customerId, status: 'active', nextInvoiceDate: today, externalReference: null } },
      {
        type: 'subscription.invoiced',
        data: { customerId, status: 'active', nextInvoiceDate: addDays(periodEnd, 1), externalReference: null, invoiceId: inv.id, periodStart: today, periodEnd },
      },
    ]);
    const invoiceEvents = await sql()`SELECT type FROM events WHERE entity_id = ${inv.id} ORDER BY sekvensnummer`;
    assert.deepEqual(invoiceEvents.map((e) => e.type), ['invoice.issued']);
    // The schedule's row waits for the next period's start.
    const [wake] = await sql()`SELECT key FROM wake_index WHERE service = 'SubscriptionSchedule' AND key = ${`${org.organizationId}:${s.id}`}`;
    assert.ok(wake);
  });

  it('sends with autoSend to a customer with an e-mail (meta.send), and not to one without', async () => {
    const s = await create({ customerId: mailedCustomerId, autoSend: true });
    const res = await run(s.id);
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual(res.body.meta, { period: res.body.meta.period, send: { status: 'sent', channel: 'email' } });
    assert.ok(dispatched.includes(res.body.data.id));
    const quiet = await create({ autoSend: true });
    const res2 = await run(quiet.id);
    assert.equal(res2.status, 201, res2.raw);
    assert.deepEqual(Object.keys(res2.body.meta), ['period']);
    assert.equal(res2.body.data.sentAt, null);
  });

  it('a period not yet started is 422 subscription_not_due, as is a second run of the same day', async () => {
    const future = await create({ startDate: addDays(today, 3) });
    assertError(await run(future.id), 422, 'subscription_not_due');
    const s = await create();
    assert.equal((await run(s.id)).status, 201);
    assertError(await run(s.id), 422, 'subscription_not_due');
  });

  it('paused and cancelled subscriptions are 422 invalid_transition; an unknown one 404', async () => {
    const s = await create();
    assert.equal((await api('POST', `/v1/subscriptions/${s.id}/pause`)).status, 200);
    const paused = await run(s.id);
    assertError(paused, 422, 'invalid_transition');
    assert.match(paused.body.error.message, /paused/);
    assert.equal((await api('POST', `/v1/subscriptions/${s.id}/cancel`)).status, 200);
    assertError(await run(s.id), 422, 'invalid_transition');
    assertError(await run('0190a0a0-0000-7000-8000-000000000000'), 404, 'subscription_not_found');
    const [{ n } = { n: -1 }] = await sql()`SELECT count(*)::int AS n FROM subscription_runs WHERE subscription_id = ${s.id}`;
    assert.equal(n, 0);
  });

  it('20 concurrent runs of one due period make exactly one invoice', async () => {
    const s = await create();
    const all = await Promise.all(Array.from({ length: 20 }, () => run(s.id)));
    const statuses = all.map((r) => r.status).sort();
    assert.equal(statuses.filter((x) => x === 201).length, 1, JSON.stringify(all.map((r) => r.raw)));
    for (const r of all.filter((x) => x.status !== 201)) {
      assert.ok(
        (r.status === 422 && r.body.error.code === 'subscription_not_due') || (r.status === 409 && r.body.error.code === 'subscription_run_in_progress'),
        r.raw,
      );
    }
    const [{ n } = { n: -1 }] = await sql()`SELECT count(*)::int AS n FROM invoices WHERE subscription_id = ${s.id}`;
    assert.equal(n, 1);
  });

  it('a due period is invoiced once, whoever runs it: 20 concurrent runs, and the schedule where an engine runs it @cluster', async () => {
    const s = await create();
    const all = await Promise.all(Array.from({ length: 20 }, () => run(s.id)));
    assert.ok(all.filter((r) => r.status === 201).length <= 1, JSON.stringify(all.map((r) => r.raw)));
    for (const r of all.filter((x) => x.status !== 201)) {
      assert.ok(
        (r.status === 422 && r.body.error.code === 'subscription_not_due') || (r.status === 409 && r.body.error.code === 'subscription_run_in_progress'),
        r.raw,
      );
    }
    // None of the runs may have issued it: then the engine's schedule has, or is doing so.
    const invoices = async () => (await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM invoices WHERE subscription_id = ${s.id}`)[0]!.n;
    for (const until = Date.now() + 15_000; (await invoices()) === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await invoices(), 1);
  });

  it('a catch-up runs one period per call, oldest first; a period before the creation is issued on the creation day', async () => {
    const s = await create({ startDate: addDays(today, -70), interval: { unit: 'month', count: 1 } });
    const starts: string[] = [];
    for (;;) {
      const res = await run(s.id);
      if (res.status === 422) break;
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.body.data.issueDate, today);
      assert.equal(res.body.data.dueDate, addDays(today, 14));
      starts.push(res.body.meta.period.start);
    }
    assert.equal(starts.length, 3);
    assert.deepEqual([...starts].sort(), starts);
    assert.equal(starts[0], addDays(today, -70));
  });

  it('a period counts as invoiced only once its invoice is issued: while its PDF renders it is still behind and next', async () => {
    // An app whose renderer waits until told, so that the run is caught between reserving and issuing the invoice.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated: PdfRenderer = {
      render: async (kind, view) => {
        await gate;
        return testRenderer().render(kind, view);
      },
      close: async () => {},
    };
    const slow = await startTestApp({ pdf: gated });
    try {
      const s = await create({ startDate: addDays(today, -7), interval: { unit: 'week', count: 1 } });
      const read = async () => (await api('GET', `/v1/subscriptions/${s.id}`)).body.data;
      const listed = async (before: string) =>
        (await api('GET', `/v1/subscriptions?customerId=${customerId}&nextInvoiceBefore=${before}&limit=100`)).body.data.some((x: { id: string }) => x.id === s.id);
      assert.deepEqual(await read().then((d) => [d.periodsBehind, d.nextInvoiceDate]), [2, addDays(today, -7)]);

      const running = call(slow.app, 'POST', `/v1/subscriptions/${s.id}/run`, { key: org.apiKey });
      // The period is reserved (its run receipt written, the invoice a locked draft with no number) ...
      for (let i = 0; ; i++) {
        const [row] = await sql()<{ status: string }[]>`
          SELECT i.status FROM subscription_runs r JOIN invoices i ON i.id = r.invoice_id WHERE r.subscription_id = ${s.id}`;
        if (row?.status === 'issuing') break;
        assert.ok(i < 200, 'the run did not reserve its period');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // ... and not invoiced yet: still behind, still next, not counted.
      const during = await read();
      assert.equal(during.periodsBehind, 2);
      assert.equal(during.nextInvoiceDate, addDays(today, -7));
      assert.equal(during.invoiceCount, 0);
      assert.equal(during.latestInvoice, null);
      assert.equal(await listed(addDays(today, -7)), true);
      const [draft] = (await api('GET', `/v1/subscriptions/${s.id}/invoices`)).body.data;
      assert.equal(draft.status, 'draft');
      assert.equal(draft.number, null);

      release();
      const res = await running;
      assert.equal(res.status, 201, res.raw);
      const after = await read();
      assert.equal(after.periodsBehind, 1);
      assert.equal(after.nextInvoiceDate, today);
      assert.equal(after.invoiceCount, 1);
      assert.equal(after.latestInvoice.id, res.body.data.id);
      assert.equal(await listed(addDays(today, -7)), false);
    } finally {
      release();
      await slow.close();
    }
  });

  it('replays under its Idempotency-Key: the same invoice, no second run', async () => {
    const s = await create({ startDate: addDays(today, -40) });
    const idempotencyKey = newIdempotencyKey();
    const first = await run(s.id, { idempotencyKey });
    assert.equal(first.status, 201, first.raw);
    const again = await run(s.id, { idempotencyKey });
    assert.equal(again.status, 201, again.raw);
    assert.deepEqual(again.body, { data: first.body.data, meta: { ...first.body.meta, replayed: true } });
    assert.equal(again.headers.location, first.headers.location);
    const [{ n } = { n: -1 }] = await sql()`SELECT count(*)::int AS n FROM subscription_runs WHERE subscription_id = ${s.id}`;
    assert.equal(n, 1);
    // A refusal is remembered too.
    const k2 = newIdempotencyKey();
    const future = await create({ startDate: addDays(today, 5) });
    assertError(await run(future.id, { idempotencyKey: k2 }), 422, 'subscription_not_due');
    assertError(await run(future.id, { idempotencyKey: k2 }), 422, 'subscription_not_due');
  });
});
