import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testClock, testDb, type ApiResponse, type CallOptions, type TestApp, type TestOrg } from '../helpers/context.ts';
import { addDays, nextPeriodOnOrAfter, period, scheduleOf, type Interval } from '../../services/subscriptions/period-math.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('subscriptions', () => {
  let t: TestApp;
  let org: TestOrg;
  let customerId: string;
  let today: string;
  const api = (method: string, url: string, opts: CallOptions = {}) => call(t.app, method, url, { key: org.apiKey, ...opts });

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
    customerId = (await api('POST', '/v1/customers', { body: { type: 'company', name: 'Abonnent ApS' } })).body.data.id;
    today = await testClock().today(org.organizationId);
  });
  after(() => t.close());

  const body = (over: Record<string, unknown> = {}) => ({
    customerId,
    name: 'Hosting',
    interval: { unit: 'month', count: 1 },
    startDate: '2096-01-31',
    lines: [{ description: 'Server', quantity: 1, unitPriceOere: 10000 }],
    ...over,
  });
  const create = async (over: Record<string, unknown> = {}, o: TestOrg = org) => {
    const res = await call(t.app, 'POST', '/v1/subscriptions', { key: o.apiKey, body: body(over) });
    assert.equal(res.status, 201, res.raw);
    return res.body.data;
  };

  function assertError(res: ApiResponse, status: number, code: string, details?: { path: string; message: string }[]): void {
    assert.equal(res.status, status, res.raw);
    const error: Record<string, unknown> = { code, message: res.body.error.message, requestId: res.headers['request-id'] };
    if (details) error.details = details;
    assert.deepEqual(res.body, { error });
  }
  const eventsOf = async (id: string) =>
    (await testDb().db.sql<{ type: string; sekvensnummer: number; entity_family: string; data: unknown }[]>`
      SELECT type, sekvensnummer, entity_family, data FROM events WHERE entity_id = ${id} ORDER BY sekvensnummer`).map((e) => ({ ...e }));

  describe('POST /v1/subscriptions', () => {
    it('creates an active subscription with the defaults, 201 + Location, the exact shape and subscription.created @cluster', async () => {
      const res = await api('POST', '/v1/subscriptions', { body: body() });
      assert.equal(res.status, 201, res.raw);
      const s = res.body.data;
      assert.match(s.id, UUID_RE);
      assert.equal(res.headers.location, `/v1/subscriptions/${s.id}`);
      assert.deepEqual(res.body, {
        data: {
          id: s.id, customerId, name: 'Hosting', interval: { unit: 'month', count: 1 }, startDate: '2096-01-31', endDate: null,
          dueDays: 30, autoSend: true,
          lines: [{ description: 'Server', quantity: 1, unitPriceOere: 10000, vatRateBps: 2500, vatExemptionReason: null, netOere: 10000, vatOere: 2500, grossOere: 12500 }],
          externalReference: null, metadata: null, buyerReference: null, orderReference: null, status: 'active', nextInvoiceDate: '2096-01-31', invoiceCount: 0, periodsBehind: 0,
          latestInvoice: null, createdAt: s.createdAt, updatedAt: s.updatedAt, pausedAt: null, cancelledAt: null, endedAt: null,
        },
        meta: {},
      });
      assert.deepEqual(await eventsOf(s.id), [{
        type: 'subscription.created', sekvensnummer: 1, entity_family: 'subscription',
        data: { customerId, status: 'active', nextInvoiceDate: '2096-01-31', externalReference: null },
      }]);
      assert.deepEqual((await api('GET', `/v1/subscriptions/${s.id}`)).body, { data: s, meta: {} });
    });

    it('takes every field', async () => {
      const s = await create({
        interval: { unit: 'week', count: 2 }, endDate: '2097-01-01', dueDays: 0, autoSend: false, externalReference: 'crm-1',
        metadata: { plan: 'gold' }, buyerReference: 'Afd. 7', orderReference: 'PO-1',
        lines: [{ description: 'Eksport', quantity: 2.5, unitPriceOere: 999, vatRateBps: 0, vatExemptionReason: 'EKSPORT' }],
      });
      assert.deepEqual(
        { ...s, id: undefined, createdAt: undefined, updatedAt: undefined },
        {
          id: undefined, customerId, name: 'Hosting', interval: { unit: 'week', count: 2 }, startDate: '2096-01-31', endDate: '2097-01-01',
          dueDays: 0, autoSend: false,
          lines: [{ description: 'Eksport', quantity: 2.5, unitPriceOere: 999, vatRateBps: 0, vatExemptionReason: 'EKSPORT', netOere: 2498, vatOere: 0, grossOere: 2498 }],
          externalReference: 'crm-1', metadata: { plan: 'gold' }, buyerReference: 'Afd. 7', orderReference: 'PO-1', status: 'active', nextInvoiceDate: '2096-01-31', invoiceCount: 0,
          periodsBehind: 0, latestInvoice: null, createdAt: undefined, updatedAt: undefined, pausedAt: null, cancelledAt: null, endedAt: null,
        },
      );
    });

    const line = { description: 'X', quantity: 1, unitPriceOere: 1 };
    const bounds: [string, Record<string, unknown>, string][] = [
      ['customerId missing', { customerId: undefined }, '/customerId'],
      ['customerId not a UUID', { customerId: 'abc' }, '/customerId'],
      ['name empty', { name: '' }, '/name'],
      ['name of 121', { name: 'n'.repeat(121) }, '/name'],
      ['interval unit day', { interval: { unit: 'day', count: 1 } }, '/interval/unit'],
      ['interval count 0', { interval: { unit: 'month', count: 0 } }, '/interval/count'],
      ['interval count 25', { interval: { unit: 'month', count: 25 } }, '/interval/count'],
      ['interval count 1.5', { interval: { unit: 'month', count: 1.5 } }, '/interval/count'],
      ['interval extra key', { interval: { unit: 'month', count: 1, day: 3 } }, '/interval/day'],
      ['startDate invalid', { startDate: '2026-02-30' }, '/startDate'],
      ['endDate invalid', { endDate: '2026-13-01' }, '/endDate'],
      ['dueDays -1', { dueDays: -1 }, '/dueDays'],
      ['dueDays 366', { dueDays: 366 }, '/dueDays'],
      ['autoSend string', { autoSend: 'yes' }, '/autoSend'],
      ['no lines', { lines: [] }, '/lines'],
      ['51 lines', { lines: Array.from({ length: 51 }, () => line) }, '/lines'],
      ['description empty', { lines: [{ ...line, description: '' }] }, '/lines/0/description'],
      ['description of 201', { lines: [{ ...line, description: 'd'.repeat(201) }] }, '/lines/0/description'],
      ['quantity 0', { lines: [{ ...line, quantity: 0 }] }, '/lines/0/quantity'],
      ['quantity 100001', { lines: [{ ...line, quantity: 100001 }] }, '/lines/0/quantity'],
      ['unit price -1', { lines: [{ ...line, unitPriceOere: -1 }] }, '/lines/0/unitPriceOere'],
      ['unit price 100000001', { lines: [{ ...line, unitPriceOere: 100_000_001 }] }, '/lines/0/unitPriceOere'],
      ['unknown exemption reason', { lines: [{ ...line, vatRateBps: 0, vatExemptionReason: 'NOPE' }] }, '/lines/0/vatExemptionReason'],
      ['a discount on a line', { lines: [{ ...line, discount: null }] }, '/lines/0/discount'],
      ['externalReference empty', { externalReference: '' }, '/externalReference'],
      ['externalReference of 201', { externalReference: 'r'.repeat(201) }, '/externalReference'],
      ['metadata value of 501', { metadata: { k: 'v'.repeat(501) } }, '/metadata/k'],
      ['status', { status: 'paused' }, '/status'],
      ['nextInvoiceDate', { nextInvoiceDate: '2096-01-31' }, '/nextInvoiceDate'],
      ['invoiceCount', { invoiceCount: 0 }, '/invoiceCount'],
      ['periodsBehind', { periodsBehind: 0 }, '/periodsBehind'],
      ['latestInvoice', { latestInvoice: null }, '/latestInvoice'],
    ];
    for (const [name, over, path] of bounds) {
      it(`400 validation_failed at ${path}: ${name}`, async () => {
        const res = await api('POST', '/v1/subscriptions', { body: JSON.parse(JSON.stringify(body(over))) });
        assert.equal(res.status, 400, res.raw);
        assert.equal(res.body.error.code, 'validation_failed');
        assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), JSON.stringify(res.body.error.details));
      });
    }

    it('takes the upper bounds', async () => {
      const s = await create({
        name: 'n'.repeat(120), interval: { unit: 'year', count: 24 }, dueDays: 365, externalReference: 'r'.repeat(200),
        lines: Array.from({ length: 50 }, () => ({ description: 'd'.repeat(200), quantity: 100000, unitPriceOere: 100_000_000, vatRateBps: 10000 })),
      });
      assert.equal(s.lines.length, 50);
      assert.equal(s.lines[0].grossOere, 20_000_000_000_000);
    });

    const refusals: [string, Record<string, unknown>, number, string, { path: string; message: string }[] | undefined][] = [
      ['endDate before startDate', { endDate: '2096-01-30' }, 422, 'invalid_end_date', [{ path: '/endDate', message: 'must be on or after startDate' }]],
      ['VAT rate -1', { lines: [{ description: 'X', quantity: 1, unitPriceOere: 1, vatRateBps: -1 }] }, 422, 'invalid_vat_rate', [{ path: '/lines/0/vatRateBps', message: 'must be between 0 and 10000' }]],
      ['VAT rate 10001', { lines: [{ description: 'X', quantity: 1, unitPriceOere: 1 }, { description: 'Y', quantity: 1, unitPriceOere: 1, vatRateBps: 10001 }] }, 422, 'invalid_vat_rate', [{ path: '/lines/1/vatRateBps', message: 'must be between 0 and 10000' }]],
      ['VAT 0 without a reason', { lines: [{ description: 'X', quantity: 1, unitPriceOere: 1, vatRateBps: 0 }] }, 422, 'vat_exemption_reason_required', [{ path: '/lines/0/vatExemptionReason', message: 'is required when vatRateBps is 0' }]],
      ['a reason beside VAT', { lines: [{ description: 'X', quantity: 1, unitPriceOere: 1, vatExemptionReason: 'ML13' }] }, 422, 'vat_exemption_reason_not_allowed', [{ path: '/lines/0/vatExemptionReason', message: 'must be null unless vatRateBps is 0' }]],
      ['an unknown customer', { customerId: '0190a0a0-0000-7000-8000-000000000000' }, 404, 'customer_not_found', undefined],
    ];
    for (const [name, over, status, code, details] of refusals) {
      it(`${status} ${code}: ${name}`, async () => {
        const before = await testDb().db.sql`SELECT count(*)::int AS n FROM subscriptions WHERE organization_id = ${org.organizationId}`;
        assertError(await api('POST', '/v1/subscriptions', { body: body(over) }), status, code, details);
        const afterRows = await testDb().db.sql`SELECT count(*)::int AS n FROM subscriptions WHERE organization_id = ${org.organizationId}`;
        assert.equal(afterRows[0]!.n, before[0]!.n);
      });
    }

    it("another organisation's customer is 404 customer_not_found", async () => {
      const other = await createTestOrg();
      assertError(await call(t.app, 'POST', '/v1/subscriptions', { key: other.apiKey, body: body() }), 404, 'customer_not_found');
    });

    it('endDate equal to startDate is one period', async () => {
      const s = await create({ endDate: '2096-01-31' });
      assert.equal(s.nextInvoiceDate, '2096-01-31');
    });

    it('a start in the past is behind by the periods started so far', async () => {
      const start = addDays(today, -70);
      const s = await create({ startDate: start, interval: { unit: 'week', count: 1 } });
      assert.equal(s.nextInvoiceDate, start);
      assert.equal(s.periodsBehind, 11);
      assert.equal(s.invoiceCount, 0);
    });
  });

  describe('GET /v1/subscriptions/{id}', () => {
    it('404 subscription_not_found for an unknown id, a non-UUID and another organisation\'s', async () => {
      const s = await create();
      const other = await createTestOrg();
      for (const [key, id] of [[org.apiKey, '0190a0a0-0000-7000-8000-000000000000'], [org.apiKey, 'nope'], [other.apiKey, s.id]] as const) {
        for (const suffix of ['', '/next_invoice', '/invoices']) {
          assertError(await call(t.app, 'GET', `/v1/subscriptions/${id}${suffix}`, { key }), 404, 'subscription_not_found');
        }
        for (const action of ['pause', 'resume', 'cancel']) {
          assertError(await call(t.app, 'POST', `/v1/subscriptions/${id}/${action}`, { key }), 404, 'subscription_not_found');
        }
        assertError(await call(t.app, 'PATCH', `/v1/subscriptions/${id}`, { key, body: { name: 'X' } }), 404, 'subscription_not_found');
      }
      assert.equal((await api('GET', `/v1/subscriptions/${s.id}`)).body.data.name, 'Hosting');
    });
  });

  describe('GET /v1/subscriptions', () => {
    it('filters by status, customerId, externalReference and nextInvoiceBefore, newest first, in cursor pages', async () => {
      const o = await createTestOrg();
      const c1 = (await call(t.app, 'POST', '/v1/customers', { key: o.apiKey, body: { type: 'person', name: 'A' } })).body.data.id;
      const c2 = (await call(t.app, 'POST', '/v1/customers', { key: o.apiKey, body: { type: 'person', name: 'B' } })).body.data.id;
      const a = await create({ customerId: c1, startDate: '2096-03-01', externalReference: 'x' }, o);
      const b = await create({ customerId: c2, startDate: '2096-02-01' }, o);
      const c = await create({ customerId: c1, startDate: '2096-01-01', externalReference: 'x' }, o);
      await call(t.app, 'POST', `/v1/subscriptions/${b.id}/pause`, { key: o.apiKey });
      const list = async (q: string) => {
        const res = await call(t.app, 'GET', `/v1/subscriptions${q}`, { key: o.apiKey });
        assert.equal(res.status, 200, res.raw);
        return res.body;
      };
      const ids = async (q: string) => (await list(q)).data.map((s: { id: string }) => s.id);
      assert.deepEqual(await ids(''), [c.id, b.id, a.id]);
      assert.deepEqual(await ids('?status=paused'), [b.id]);
      assert.deepEqual(await ids('?status=active'), [c.id, a.id]);
      assert.deepEqual(await ids('?status=cancelled'), []);
      assert.deepEqual(await ids(`?customerId=${c1}`), [c.id, a.id]);
      assert.deepEqual(await ids('?externalReference=x'), [c.id, a.id]);
      assert.deepEqual(await ids('?externalReference=y'), []);
      assert.deepEqual(await ids('?nextInvoiceBefore=2096-02-29'), [c.id]);
      assert.deepEqual(await ids('?nextInvoiceBefore=2096-03-01'), [c.id, a.id]);
      const first = await list('?limit=2');
      assert.deepEqual(first.data.map((s: { id: string }) => s.id), [c.id, b.id]);
      const second = await list(`?limit=2&cursor=${first.meta.nextCursor}`);
      assert.deepEqual(second, { data: [(await list('')).data[2]], meta: { nextCursor: null } });
      const filtered = await list(`?externalReference=x&limit=1`);
      assertError(await call(t.app, 'GET', `/v1/subscriptions?limit=1&cursor=${filtered.meta.nextCursor}`, { key: o.apiKey }), 400, 'invalid_cursor');
      assert.deepEqual(await ids(`?externalReference=x&limit=1&cursor=${filtered.meta.nextCursor}`), [a.id]);
      assertError(await call(t.app, 'GET', `/v1/subscriptions?limit=1&cursor=${first.meta.nextCursor}`, { key: org.apiKey }), 400, 'invalid_cursor');
    });

    const badQueries: [string, string][] = [
      ['?status=ended', 'status'], ['?customerId=x', 'customerId'], ['?nextInvoiceBefore=2096-02-30', 'nextInvoiceBefore'],
      ['?limit=0', 'limit'], ['?limit=201', 'limit'], ['?externalReference=', 'externalReference'], ['?foo=1', 'foo'],
    ];
    for (const [q, what] of badQueries) {
      it(`400 validation_failed for ${q}`, async () => {
        const res = await api('GET', `/v1/subscriptions${q}`);
        assert.equal(res.status, 400, res.raw);
        assert.equal(res.body.error.code, 'validation_failed', what);
      });
    }

    it('another organisation sees none of them', async () => {
      const other = await createTestOrg();
      await create();
      assert.deepEqual((await call(t.app, 'GET', '/v1/subscriptions', { key: other.apiKey })).body, { data: [], meta: { nextCursor: null } });
    });
  });

  describe('transitions', () => {
    const act = (id: string, action: string) => api('POST', `/v1/subscriptions/${id}/${action}`);

    it('pause, resume and cancel: each allowed one answers 200 with the subscription and writes its event', async () => {
      const s = await create();
      const paused = await act(s.id, 'pause');
      assert.equal(paused.status, 200, paused.raw);
      assert.equal(paused.body.data.status, 'paused');
      assert.equal(paused.body.data.nextInvoiceDate, null);
      assert.equal(paused.body.data.periodsBehind, 0);
      assert.ok(paused.body.data.pausedAt);
      assert.deepEqual((await api('GET', `/v1/subscriptions/${s.id}`)).body.data, paused.body.data);
      const resumed = await act(s.id, 'resume');
      assert.equal(resumed.status, 200, resumed.raw);
      assert.equal(resumed.body.data.status, 'active');
      assert.equal(resumed.body.data.pausedAt, null);
      assert.equal(resumed.body.data.nextInvoiceDate, '2096-01-31');
      const cancelled = await act(s.id, 'cancel');
      assert.equal(cancelled.status, 200, cancelled.raw);
      assert.equal(cancelled.body.data.status, 'cancelled');
      assert.ok(cancelled.body.data.cancelledAt);
      assert.equal(cancelled.body.data.endedAt, null);
      assert.equal(cancelled.body.data.nextInvoiceDate, null);
      const data = (status: string, next: string | null) => ({ customerId, status, nextInvoiceDate: next, externalReference: null });
      assert.deepEqual((await eventsOf(s.id)).map((e) => [e.type, e.sekvensnummer, e.data]), [
        ['subscription.created', 1, data('active', '2096-01-31')],
        ['subscription.paused', 2, data('paused', null)],
        ['subscription.resumed', 3, data('active', '2096-01-31')],
        ['subscription.cancelled', 4, data('cancelled', null)],
      ]);
    });

    it('cancels a paused subscription', async () => {
      const s = await create();
      await act(s.id, 'pause');
      const res = await act(s.id, 'cancel');
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual([res.body.data.status, res.body.data.pausedAt], ['cancelled', null]);
    });

    const refused: [string, string[], string, RegExp][] = [
      ['resume of an active one', [], 'resume', /is active/],
      ['pause of a paused one', ['pause'], 'pause', /is paused/],
      ['pause of a cancelled one', ['cancel'], 'pause', /is cancelled/],
      ['resume of a cancelled one', ['cancel'], 'resume', /is cancelled/],
      ['cancel of a cancelled one', ['cancel'], 'cancel', /is cancelled/],
      ['resume of a cancelled, once paused one', ['pause', 'cancel'], 'resume', /is cancelled/],
    ];
    for (const [name, before, action, message] of refused) {
      it(`422 invalid_transition: ${name}, naming the status`, async () => {
        const s = await create();
        for (const a of before) assert.equal((await act(s.id, a)).status, 200);
        const events = await eventsOf(s.id);
        const res = await act(s.id, action);
        assertError(res, 422, 'invalid_transition');
        assert.match(res.body.error.message, message);
        assert.deepEqual(await eventsOf(s.id), events);
      });
    }

    it('a PATCH of a cancelled subscription is 422 invalid_transition', async () => {
      const s = await create();
      await act(s.id, 'cancel');
      const res = await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { name: 'Ny' } });
      assertError(res, 422, 'invalid_transition');
      assert.match(res.body.error.message, /is cancelled/);
    });

    it('a body on a transition is 400; none or {} is taken', async () => {
      const s = await create();
      const res = await api('POST', `/v1/subscriptions/${s.id}/pause`, { body: { at: '2096-01-01' } });
      assert.equal(res.status, 400, res.raw);
      assert.equal((await api('POST', `/v1/subscriptions/${s.id}/pause`, { body: {} })).status, 200);
    });

    it('resume skips the periods that started while paused: the first start on or after today', async () => {
      const start = addDays(today, -45);
      const s = await create({ startDate: start, interval: { unit: 'week', count: 1 } });
      await act(s.id, 'pause');
      const res = await act(s.id, 'resume');
      const sched = scheduleOf(start, { unit: 'week', count: 1 }, null);
      const k = nextPeriodOnOrAfter(sched, today)!;
      assert.equal(res.body.data.nextInvoiceDate, period(sched, k).start);
      assert.equal(res.body.data.periodsBehind, period(sched, k).start === today ? 1 : 0);
    });

    it('resume after endDate passed while paused ends the subscription (resumed, then ended)', async () => {
      const s = await create({ startDate: addDays(today, -40), endDate: addDays(today, -5), interval: { unit: 'month', count: 1 } });
      await act(s.id, 'pause');
      const res = await act(s.id, 'resume');
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.data.status, 'cancelled');
      assert.ok(res.body.data.endedAt);
      assert.equal(res.body.data.cancelledAt, null);
      assert.deepEqual((await eventsOf(s.id)).map((e) => e.type), ['subscription.created', 'subscription.paused', 'subscription.resumed', 'subscription.ended']);
    });
  });

  describe('PATCH /v1/subscriptions/{id}', () => {
    it('changes the given fields only, writes subscription.updated, null clears', async () => {
      const s = await create({ externalReference: 'a', metadata: { k: 'v' } });
      const res = await api('PATCH', `/v1/subscriptions/${s.id}`, {
        body: { name: 'Ny', dueDays: 8, autoSend: false, externalReference: null, metadata: { n: '1' }, lines: [{ description: 'Y', quantity: 3, unitPriceOere: 100 }] },
      });
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.data, {
        ...s, name: 'Ny', dueDays: 8, autoSend: false, externalReference: null, metadata: { n: '1' },
        lines: [{ description: 'Y', quantity: 3, unitPriceOere: 100, vatRateBps: 2500, vatExemptionReason: null, netOere: 300, vatOere: 75, grossOere: 375 }],
        updatedAt: res.body.data.updatedAt,
      });
      assert.deepEqual((await eventsOf(s.id)).at(-1)!.data, { customerId, status: 'active', nextInvoiceDate: '2096-01-31', externalReference: null });
      assert.equal((await api('PATCH', `/v1/subscriptions/${s.id}`)).body.data.name, 'Ny');
    });

    it('a new interval applies from nextInvoiceDate on; a new startDate before any invoice restarts from it', async () => {
      const s = await create({ startDate: '2096-01-31' });
      const res = await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { interval: { unit: 'week', count: 2 } } });
      assert.equal(res.body.data.nextInvoiceDate, '2096-01-31');
      assert.deepEqual((await api('GET', `/v1/subscriptions/${s.id}/next_invoice`)).body.data.periodEnd, '2096-02-13');
      const moved = await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { startDate: '2096-03-31', interval: { unit: 'month', count: 1 } } });
      assert.equal(moved.body.data.nextInvoiceDate, '2096-03-31');
      assert.equal((await api('GET', `/v1/subscriptions/${s.id}/next_invoice`)).body.data.periodEnd, '2096-04-29');
    });

    it('customerId: a known one is taken, an unknown one is 404; endDate before startDate is 422 invalid_end_date', async () => {
      const s = await create();
      const c2 = (await api('POST', '/v1/customers', { body: { type: 'person', name: 'C2' } })).body.data.id;
      assert.equal((await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { customerId: c2 } })).body.data.customerId, c2);
      assertError(await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { customerId: '0190a0a0-0000-7000-8000-000000000000' } }), 404, 'customer_not_found');
      assertError(await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { endDate: '2096-01-01' } }), 422, 'invalid_end_date', [{ path: '/endDate', message: 'must be on or after startDate' }]);
      assertError(await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { startDate: '2097-01-01', endDate: '2096-12-31' } }), 422, 'invalid_end_date', [{ path: '/endDate', message: 'must be on or after startDate' }]);
      assertError(await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { lines: [{ description: 'X', quantity: 1, unitPriceOere: 1, vatRateBps: 20000 }] } }), 422, 'invalid_vat_rate', [{ path: '/lines/0/vatRateBps', message: 'must be between 0 and 10000' }]);
    });

    it('customerId and startDate cannot change once a period was invoiced (422 subscription_already_invoiced)', async () => {
      const s = await create();
      // A period's run receipt, as the run writes it with its invoice.
      const { db } = testDb();
      const inv = await api('POST', '/v1/invoices', { body: { customerId, lines: [{ description: 'P', quantity: 1, unitPriceOere: 100 }] } });
      await db.sql`UPDATE invoices SET subscription_id = ${s.id}, period_start = '2096-01-31', period_end = '2096-02-28' WHERE id = ${inv.body.data.id}`;
      await db.sql`INSERT INTO subscription_runs (organization_id, subscription_id, period_index, period_start, period_end, invoice_id)
        VALUES (${org.organizationId}, ${s.id}, 0, '2096-01-31', '2096-02-28', ${inv.body.data.id})`;
      const c2 = (await api('POST', '/v1/customers', { body: { type: 'person', name: 'C3' } })).body.data.id;
      assertError(await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { customerId: c2 } }), 422, 'subscription_already_invoiced', [{ path: '/customerId', message: 'cannot change once a period was invoiced' }]);
      assertError(await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { startDate: '2096-02-01' } }), 422, 'subscription_already_invoiced', [{ path: '/startDate', message: 'cannot change once a period was invoiced' }]);
      // The same values again are no change.
      assert.equal((await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { customerId, startDate: '2096-01-31', name: 'Z' } })).status, 200);
      // The draft is listed under the subscription (as a draft: invoiceCount counts issued invoices only).
      const invoices = await api('GET', `/v1/subscriptions/${s.id}/invoices`);
      assert.deepEqual(invoices.body.data.map((i: { id: string; subscriptionId: string; periodStart: string; periodEnd: string }) => [i.id, i.subscriptionId, i.periodStart, i.periodEnd]), [[inv.body.data.id, s.id, '2096-01-31', '2096-02-28']]);
      assert.equal((await api('GET', `/v1/subscriptions/${s.id}`)).body.data.invoiceCount, 0);
    });

    it('an endDate that leaves no further period ends the subscription', async () => {
      const s = await create({ startDate: addDays(today, -10), interval: { unit: 'year', count: 1 } });
      const { db } = testDb();
      await db.sql`UPDATE subscriptions SET next_period = 1, next_invoice_date = NULL WHERE id = ${s.id}`;
      const res = await api('PATCH', `/v1/subscriptions/${s.id}`, { body: { endDate: addDays(today, 30) } });
      assert.equal(res.body.data.status, 'cancelled');
      assert.ok(res.body.data.endedAt);
      assert.deepEqual((await eventsOf(s.id)).slice(-2).map((e) => e.type), ['subscription.updated', 'subscription.ended']);
    });

    it('refuses read-only fields and bounds at their pointers', async () => {
      const s = await create();
      for (const [patch, path] of [[{ status: 'active' }, '/status'], [{ nextInvoiceDate: '2096-01-01' }, '/nextInvoiceDate'], [{ name: '' }, '/name'], [{ lines: [] }, '/lines'], [{ interval: { unit: 'month', count: 25 } }, '/interval/count']] as const) {
        const res = await api('PATCH', `/v1/subscriptions/${s.id}`, { body: patch });
        assert.equal(res.status, 400, res.raw);
        assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), res.raw);
      }
    });
  });

  describe('GET …/next_invoice', () => {
    const previews: [string, string, Interval][] = [
      ['monthly from the 31st', '2096-01-31', { unit: 'month', count: 1 }],
      ['monthly from the 31st, in a common year', '2097-01-31', { unit: 'month', count: 1 }],
      ['yearly from 29 February', '2096-02-29', { unit: 'year', count: 1 }],
      ['weekly', '2096-03-05', { unit: 'week', count: 1 }],
      ['every 3 weeks', '2096-03-05', { unit: 'week', count: 3 }],
    ];
    for (const [name, start, interval] of previews) {
      it(`${name}: the period of the period math and the invoice arithmetic`, async () => {
        const s = await create({
          startDate: start, interval,
          lines: [{ description: 'A', quantity: 1.5, unitPriceOere: 333 }, { description: 'B', quantity: 1, unitPriceOere: 1000, vatRateBps: 0, vatExemptionReason: 'ML13' }],
        });
        const p = period(scheduleOf(start, interval, null), 0);
        const res = await api('GET', `/v1/subscriptions/${s.id}/next_invoice`);
        assert.deepEqual(res.body, {
          data: {
            date: start, periodStart: p.start, periodEnd: p.end,
            lines: [
              { description: 'A', quantity: 1.5, unitPriceOere: 333, vatRateBps: 2500, vatExemptionReason: null, netOere: 500, vatOere: 125, grossOere: 625 },
              { description: 'B', quantity: 1, unitPriceOere: 1000, vatRateBps: 0, vatExemptionReason: 'ML13', netOere: 1000, vatOere: 0, grossOere: 1000 },
            ],
            netOere: 1500, vatOere: 125, grossOere: 1625,
          },
          meta: {},
        });
      });
    }

    const later: [string, number, Interval][] = [
      ['monthly from the 31st', 400, { unit: 'month', count: 1 }],
      ['yearly from 29 February', 3000, { unit: 'year', count: 1 }],
      ['weekly', 30, { unit: 'week', count: 1 }],
    ];
    for (const [name, daysAgo, interval] of later) {
      it(`${name}, resumed today: the first period on or after today as the period math gives it`, async () => {
        const start = name.includes('29 February') ? '2016-02-29' : name.includes('31st') ? '2025-01-31' : addDays(today, -daysAgo);
        const s = await create({ startDate: start, interval });
        await api('POST', `/v1/subscriptions/${s.id}/pause`);
        await api('POST', `/v1/subscriptions/${s.id}/resume`);
        const sched = scheduleOf(start, interval, null);
        const p = period(sched, nextPeriodOnOrAfter(sched, today)!);
        const res = await api('GET', `/v1/subscriptions/${s.id}/next_invoice`);
        assert.deepEqual([res.body.data.date, res.body.data.periodStart, res.body.data.periodEnd], [p.start, p.start, p.end]);
      });
    }

    it('a period waiting for its run is previewed with today as its date', async () => {
      const start = addDays(today, -3);
      const s = await create({ startDate: start });
      const res = await api('GET', `/v1/subscriptions/${s.id}/next_invoice`);
      assert.deepEqual([res.body.data.date, res.body.data.periodStart], [today, start]);
    });

    it('data is null while paused and once cancelled', async () => {
      const s = await create();
      await api('POST', `/v1/subscriptions/${s.id}/pause`);
      assert.deepEqual((await api('GET', `/v1/subscriptions/${s.id}/next_invoice`)).body, { data: null, meta: {} });
      await api('POST', `/v1/subscriptions/${s.id}/cancel`);
      assert.deepEqual((await api('GET', `/v1/subscriptions/${s.id}/next_invoice`)).body, { data: null, meta: {} });
    });
  });

  describe('GET …/invoices', () => {
    it('is empty until a period is invoiced', async () => {
      const s = await create();
      assert.deepEqual((await api('GET', `/v1/subscriptions/${s.id}/invoices`)).body, { data: [], meta: { nextCursor: null } });
    });

    it('lists newest period first in cursor pages', async () => {
      const s = await create();
      const { db } = testDb();
      const ids: string[] = [];
      for (const [startDate, end] of [['2096-01-31', '2096-02-28'], ['2096-02-29', '2096-03-30'], ['2096-03-31', '2096-04-29']]) {
        const inv = await api('POST', '/v1/invoices', { body: { customerId, lines: [{ description: 'P', quantity: 1, unitPriceOere: 100 }] } });
        await db.sql`UPDATE invoices SET subscription_id = ${s.id}, period_start = ${startDate!}, period_end = ${end!} WHERE id = ${inv.body.data.id}`;
        ids.push(inv.body.data.id);
      }
      const first = await api('GET', `/v1/subscriptions/${s.id}/invoices?limit=2`);
      assert.deepEqual(first.body.data.map((i: { id: string }) => i.id), [ids[2], ids[1]]);
      const second = await api('GET', `/v1/subscriptions/${s.id}/invoices?limit=2&cursor=${first.body.meta.nextCursor}`);
      assert.deepEqual(second.body.data.map((i: { id: string }) => i.id), [ids[0]]);
      assert.equal(second.body.meta.nextCursor, null);
      // An ordinary invoice has the three fields null.
      const plain = await api('POST', '/v1/invoices', { body: { customerId, lines: [{ description: 'P', quantity: 1, unitPriceOere: 100 }] } });
      assert.deepEqual([plain.body.data.subscriptionId, plain.body.data.periodStart, plain.body.data.periodEnd], [null, null, null]);
    });
  });

  describe('scopes', () => {
    it('reads need subscriptions:read, writes subscriptions:write (403 insufficient_scope)', async () => {
      const s = await create();
      const readOnly = await createTestKey(org, ['subscriptions:read']);
      const writeOnly = await createTestKey(org, ['subscriptions:write']);
      const denied = (scope: string) => [{ path: '', message: `required scope: ${scope}` }];
      assertError(await call(t.app, 'POST', '/v1/subscriptions', { key: readOnly, body: body() }), 403, 'insufficient_scope', denied('subscriptions:write'));
      assertError(await call(t.app, 'PATCH', `/v1/subscriptions/${s.id}`, { key: readOnly, body: {} }), 403, 'insufficient_scope', denied('subscriptions:write'));
      for (const a of ['pause', 'resume', 'cancel']) {
        assertError(await call(t.app, 'POST', `/v1/subscriptions/${s.id}/${a}`, { key: readOnly }), 403, 'insufficient_scope', denied('subscriptions:write'));
      }
      for (const path of ['/v1/subscriptions', `/v1/subscriptions/${s.id}`, `/v1/subscriptions/${s.id}/next_invoice`, `/v1/subscriptions/${s.id}/invoices`]) {
        assertError(await call(t.app, 'GET', path, { key: writeOnly }), 403, 'insufficient_scope', denied('subscriptions:read'));
        assert.equal((await call(t.app, 'GET', path, { key: readOnly })).status, 200);
      }
      assertError(await call(t.app, 'GET', '/v1/subscriptions', { key: null }), 401, 'unauthenticated');
    });
  });
});
