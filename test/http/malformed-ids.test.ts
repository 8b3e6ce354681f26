import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { call, createTestOrg, startTestApp, type ApiResponse, type TestApp, type TestOrg } from '../helpers/context.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { registerPathIdCheck } from '../../services/api/plugins/path-ids.ts';

/** Values sent where a route expects an id: none is a UUID, some are personal data that must not reach a log. */
const MALFORMED = [
  'not-a-uuid',
  'kunde@example.dk',
  '010101-1234',
  'x'.repeat(2000),
  `${uuidv7()}x`,
  `${uuidv7().slice(0, -1)}`,
  "'; SELECT 1 --",
];

/**
 * A body each mutating route accepts, so that the request gets past validation to the id (a route left out here
 * would answer 400 validation_failed for any id, and the test says so).
 */
const BODIES: Record<string, unknown> = {
  'POST /v1/customers/:customerId/departments': { name: 'Lager' },
  'PUT /v1/invoices/:invoiceId': { customerId: uuidv7(), lines: [{ description: 'Kaffe', quantity: 1, unitPriceOere: 100 }] },
  'POST /v1/invoices/:invoiceId/credit': { reason: 'Fejl' },
  'POST /v1/invoices/:invoiceId/payment-plan': { installments: [{ dueDate: '2099-01-01', amountOere: 100 }, { dueDate: '2099-02-01', amountOere: 100 }] },
  'POST /v1/webhook-endpoints/:endpointId/replay': { since: '2026-01-01' },
  'POST /v1/invoices/:invoiceId/payments': { amountOere: 100, paymentDate: '2026-01-01' },
  'POST /v1/reminder-flows/:flowKey/versions/:version/activate': { active: true },
  'PATCH /v1/members/:userId': { role: 'admin' },
  'POST /v1/bank-statement-entries/:entryId/match': { invoiceId: uuidv7() },
};

const paramNames = (url: string): string[] => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);

/** What a client can compare: everything but the request id. */
const answer = (res: ApiResponse) => ({ status: res.status, code: res.body?.error?.code, message: res.body?.error?.message });

describe('malformed ids: every route answers a malformed id as it answers an unknown one', () => {
  let t: TestApp;
  let org: TestOrg;

  before(async () => {
    t = await startTestApp();
    // The pro plan, so that plan-bound routes (reminder flows) get as far as their ids.
    org = await createTestOrg({ plan: 'pro' });
  });
  after(async () => t?.close());

  it('every scoped route with a path parameter: no 5xx, the same status, code and message as for an unknown id', async () => {
    const routes = t.app.scopedRoutes.filter((r) => paramNames(r.url).length > 0);
    // The catalogue is the app's own list of routes: a new route is covered without being named here.
    assert.ok(routes.length >= 40, `only ${routes.length} routes with a path parameter`);
    for (const route of routes) {
      const id = `${route.method} ${route.url}`;
      const body = BODIES[id] ?? (route.method === 'GET' || route.method === 'DELETE' ? undefined : {});
      const send = (values: Record<string, string>) =>
        call(t.app, route.method, route.url.replace(/:([A-Za-z0-9_]+)/g, (_, n: string) => encodeURIComponent(values[n]!)), { key: org.apiKey, body });
      for (const name of paramNames(route.url)) {
        // The other parameters are unknown ids too, so that both requests stop at the same check.
        const others = Object.fromEntries(paramNames(route.url).map((n) => [n, uuidv7()]));
        const unknown = answer(await send(others));
        assert.ok(unknown.status >= 400 && unknown.status < 500, `${id}: an unknown id answers ${unknown.status}`);
        assert.notEqual(unknown.code, 'validation_failed', `${id}: give it a valid body in BODIES so that its ids are looked at`);
        for (const bad of MALFORMED) {
          const res = await send({ ...others, [name]: bad });
          assert.ok(res.status < 500, `${id} with ${name}=${bad.slice(0, 40)}: ${res.status} ${res.raw}`);
          assert.deepEqual(answer(res), unknown, `${id} with ${name}=${bad.slice(0, 40)}`);
        }
      }
    }
    // Nothing the malformed ids made the app log: no error line, and none of the values.
    const logs = t.logs();
    assert.ok(!logs.includes('"level":50'), 'an error was logged');
    for (const bad of ['kunde@example.dk', '010101-1234', 'not-a-uuid']) assert.ok(!logs.includes(bad), `the log shows ${bad}`);
  });

  it('POST /v1/subscriptions/{id}/run with a malformed id is 404 subscription_not_found (it was a 500 from PostgreSQL) @cluster', async () => {
    const res = await call(t.app, 'POST', '/v1/subscriptions/not-a-uuid/run', { key: org.apiKey });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'subscription_not_found');
  });

  it('a batch operation with a malformed invoice id answers as one with an unknown id', async () => {
    const register = async (invoiceId: string) => {
      const res = await call(t.app, 'POST', '/v1/batch', {
        key: org.apiKey, body: { operations: [{ op: 'payment.register', params: { invoiceId, amountOere: 100, paymentDate: '2026-01-01' } }] },
      });
      assert.ok(res.status < 500, res.raw);
      const [item] = res.body.data.results;
      return { status: item.status, code: item.error?.code, message: item.error?.message };
    };
    const unknown = await register(uuidv7());
    assert.equal(unknown.code, 'invoice_not_found');
    for (const bad of MALFORMED) assert.deepEqual(await register(bad), unknown, bad.slice(0, 40));
  });

  it('refuses at start a scoped route whose path parameter is neither an id (…Id) nor a known key', async () => {
    const app = Fastify();
    registerPathIdCheck(app);
    assert.throws(() => app.get('/things/:thing', { config: { scope: 'customers:read' } }, async () => ({})), /path parameter thing/);
    app.get('/things/:thingId', { config: { scope: 'customers:read' } }, async (req) => req.params);
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/things/kunde@example.dk' });
    assert.deepEqual(res.json(), { thingId: '00000000-0000-0000-0000-000000000000' });
    await app.close();
  });
});
