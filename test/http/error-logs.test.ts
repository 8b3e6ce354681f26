import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { call, createTestOrg, startTestApp, type TestApp, type TestOrg } from '../helpers/context.ts';
import type { AppDeps } from '../../services/api/app.ts';
import { errSerializer, loggableError, requestValues } from '../../services/shared/loggable-error.ts';

const EMAIL = 'kunde.fejl@privat-person.dk';
const CPR = '010190-1234';

/** An unexpected error is logged by what identifies the fault, never by the request data its message quotes. */
describe('error logs carry no request data', () => {
  let t: TestApp;
  let org: TestOrg;

  // Routes that fail the way a use case can: PostgreSQL refusing a value (and quoting it), and an error whose message
  // was written around the values it was given.
  const failingRoutes = (app: FastifyInstance, deps: AppDeps) => {
    // Unscoped: a scoped route's path parameters must be ids, and this one is there to take anything.
    app.get<{ Params: { value: string } }>('/v1/test/cast/:value', async (req) =>
      deps.db.read((sql) => sql`SELECT ${req.params.value}::uuid AS id`));
    app.post<{ Body: { email: string; cpr: string } }>('/v1/test/lookup', { config: { scope: 'customers:write' }, schema: { body: { type: 'object' } } }, async (req) =>
      deps.db.read((sql) => sql`SELECT ${req.body.cpr}::int AS n WHERE ${req.body.email}::text IS NOT NULL`));
    app.post<{ Body: { email: string; cpr: string } }>('/v1/test/throw', { config: { scope: 'customers:write' }, schema: { body: { type: 'object' } } }, async (req) => {
      throw new Error(`no debtor ${req.body.email} (${req.body.cpr})`, { cause: new Error(`lookup of ${req.body.cpr} failed`) });
    });
  };

  before(async () => {
    t = await startTestApp({ extraRoutes: failingRoutes });
    org = await createTestOrg();
  });
  after(() => t?.close());

  it('a PostgreSQL error is logged by its code and routine, without the value it quotes', async () => {
    const before = t.logs().length;
    for (const value of [EMAIL, CPR]) {
      const res = await call(t.app, 'GET', `/v1/test/cast/${encodeURIComponent(value)}`, { key: org.apiKey });
      assert.equal(res.status, 500);
      assert.equal(res.body.error.code, 'internal_error');
    }
    const res = await call(t.app, 'POST', '/v1/test/lookup', { key: org.apiKey, body: { email: EMAIL, cpr: CPR } });
    assert.equal(res.status, 500);
    const logs = t.logs().slice(before);
    const errors = logs.split('\n').filter((l) => l.includes('"unhandled error"')).map((l) => JSON.parse(l) as { err: Record<string, string> });
    assert.equal(errors.length, 3);
    for (const { err } of errors) {
      assert.equal(err.type, 'PostgresError');
      assert.equal(err.code, '22P02');
      assert.match(err.routine!, /^[a-z_0-9]+$/);
      assert.match(err.stack!, /^PostgresError: PostgreSQL error 22P02 in /);
    }
    for (const needle of [EMAIL, CPR, encodeURIComponent(EMAIL), 'kunde.fejl', 'invalid input syntax']) {
      assert.ok(!logs.includes(needle), `the log shows ${needle}`);
    }
  });

  it('any other error is logged with the request’s values masked in its message, stack and cause', async () => {
    const before = t.logs().length;
    const res = await call(t.app, 'POST', '/v1/test/throw', { key: org.apiKey, body: { email: EMAIL, cpr: CPR } });
    assert.equal(res.status, 500);
    const logs = t.logs().slice(before);
    const line = logs.split('\n').find((l) => l.includes('"unhandled error"'));
    assert.ok(line, 'the error was logged');
    const { err } = JSON.parse(line) as { err: { type: string; message: string; stack: string; cause: { message: string } } };
    assert.equal(err.type, 'Error');
    assert.equal(err.message, 'no debtor [redacted] ([redacted])');
    assert.match(err.stack, /^Error: no debtor \[redacted\] \(\[redacted\]\)\n\s+at /);
    assert.equal(err.cause.message, 'lookup of [redacted] failed');
    for (const needle of [EMAIL, CPR, 'kunde.fejl']) assert.ok(!logs.includes(needle), `the log shows ${needle}`);
  });

  it('masks quoted text, e-mail addresses and CPR-like numbers even without the request at hand', () => {
    const logged = loggableError(new Error(`customer "Jens Hansen" <jens@example.dk> 0101901234 / ${CPR} refused`));
    assert.equal(logged.message, 'customer "[redacted]" <[redacted]> [redacted] / [redacted] refused');
    // Ids, codes and addresses of infrastructure faults stay: they say what went wrong.
    const id = '0190a8a0-1234-7000-8000-123456789012';
    assert.equal(loggableError(new Error(`invoice ${id} points to a missing document`)).message, `invoice ${id} points to a missing document`);
    assert.equal(loggableError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' })).message, 'connect ECONNREFUSED 10.0.0.1:5432');
    assert.deepEqual(requestValues({ params: { id: 'abc' }, query: { q: 'x' }, body: { a: [{ b: EMAIL }], n: 12345 } }), [EMAIL, '12345', 'abc', 'x']);
    // The loggers' `err` serializer (the API's and the pay service's): an Error is made loggable, a loggable one kept.
    assert.equal(errSerializer(new Error(`no mail to ${EMAIL}`)).message, 'no mail to [redacted]');
    const made = loggableError(new Error(`no debtor ${CPR}`), [CPR]);
    assert.equal(errSerializer(made), made);
  });
});

/** Whichever process takes a request: what it refuses, it logs without the values the request carried. */
describe('logs of a refused request carry none of its values @cluster', () => {
  let t: TestApp;
  let org: TestOrg;
  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
  });
  after(() => t.close());

  it('a body that fails validation is logged by route and status, without the e-mail or CPR it held', async () => {
    const res = await call(t.app, 'POST', `/v1/customers?ref=${encodeURIComponent(EMAIL)}`, { key: org.apiKey, body: { type: 'person', name: 5, email: EMAIL, note: CPR } });
    assert.equal(res.status, 400);
    const logs = t.logs();
    assert.ok(logs.includes(`"reqId":"${res.headers['request-id'] as string}"`), 'the request was logged');
    for (const needle of [EMAIL, CPR, encodeURIComponent(EMAIL), 'kunde.fejl']) assert.ok(!logs.includes(needle), `the log shows ${needle}`);
  });
});
