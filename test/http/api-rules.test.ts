import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { mutate } from '../../services/api/idempotency.ts';
import { requestFingerprint } from '../../services/idempotency/request-fingerprint.ts';
import type { AppDeps } from '../../services/api/app.ts';
import { inProcessOnly, call, createTestKey, createTestOrg, newIdempotencyKey, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { revokeApiKey } from '../../services/organizations/revoke-api-key.ts';
import { DomainError } from '../../services/shared/errors.ts';

/** Rules that hold on every route (docs/api-conventions.md), provoked one error code at a time. */
describe('API rules', () => {
  let t: TestApp;
  let org: TestOrg;
  let releaseSlow: () => void = () => {};
  /** Resolved once the slow route holds its idempotency key (inside its transaction), instead of guessing a delay. */
  let enteredSlow: () => void = () => {};
  let raceHash: Buffer | undefined;
  const customer = { type: 'person', name: 'Rule Tester' };

  const testRoutes = (app: FastifyInstance, deps: AppDeps) => {
    app.get('/v1/test/boom', { config: { scope: 'customers:read' } }, async () => {
      const err = new Error('connect ECONNREFUSED 10.0.0.1:5432 at /srv/app/services/db.ts:12 SELECT secret FROM x');
      throw err;
    });
    app.post('/v1/test/slow', { config: { scope: 'customers:write' }, schema: { body: { type: 'object' } } }, (req, reply) =>
      mutate(deps, req, reply, async (tx) => {
        await tx`SELECT 1`;
        const released = new Promise<void>((resolve) => (releaseSlow = resolve));
        enteredSlow();
        await released;
        return { status: 201, data: { done: true } };
      }),
    );
    // Simulates a concurrent request with the same key committing its effect while this one runs (the snapshot
    // window the final guard exists for): this one is then refused by a business rule because of that effect.
    app.post('/v1/test/race', { config: { scope: 'customers:write' }, schema: { body: { type: 'object' } } }, (req, reply) =>
      mutate(deps, req, reply, async () => {
        const body = JSON.stringify({ data: { winner: true }, meta: {} });
        await deps.db.tx((other) => other`
          INSERT INTO idempotency_keys (organization_id, key, request_hash, response_status, response_body, response_location)
          SELECT ${req.auth.organizationId}, ${req.idempotencyKey!}, request_hash, 201, ${deps.keyring.encrypt(body)}, '/v1/test/winner'
          FROM (SELECT ${raceHash!}::bytea AS request_hash) h`);
        throw new DomainError('sku_already_exists', 'Refused because of the winner’s effect.');
      }),
    );
    // A deferred write that fails (NOT NULL violation) after an awaited one succeeded: both must be rolled back.
    app.post('/v1/test/deferred-fails', { config: { scope: 'customers:write' }, schema: { body: { type: 'object' } } }, (req, reply) =>
      mutate(deps, req, reply, async (tx) => {
        const ref = (req.body as { ref: string }).ref;
        await tx`INSERT INTO customers (id, organization_id, type, name, external_reference)
                 VALUES (gen_random_uuid(), ${req.auth.organizationId}, 'person', 'Awaited', ${ref})`;
        const pending = tx`INSERT INTO customers (id, organization_id, type, name) VALUES (gen_random_uuid(), ${req.auth.organizationId}, 'person', NULL)`.execute();
        return { status: 201, data: { never: true }, pending };
      }),
    );
    // The winner's response is stored by another transaction while this one's deferred write is in flight: this one's
    // own store then finds the key taken, rolls back with its write, and answers with the winner's response.
    app.post('/v1/test/lost-race', { config: { scope: 'customers:write' }, schema: { body: { type: 'object' } } }, (req, reply) =>
      mutate(deps, req, reply, async (tx) => {
        const ref = (req.body as { ref: string }).ref;
        const body = JSON.stringify({ data: { winner: true }, meta: {} });
        await deps.db.tx((other) => other`
          INSERT INTO idempotency_keys (organization_id, key, request_hash, response_status, response_body, response_location)
          VALUES (${req.auth.organizationId}, ${req.idempotencyKey!}, ${raceHash!}, 201, ${deps.keyring.encrypt(body)}, '/v1/test/winner')`);
        const pending = tx`INSERT INTO customers (id, organization_id, type, name, external_reference)
                           VALUES (gen_random_uuid(), ${req.auth.organizationId}, 'person', 'Loser', ${ref})`.execute();
        return { status: 201, data: { winner: false }, pending };
      }),
    );
    app.get('/v1/test/document', { config: { scope: 'customers:read', rateClass: 'document' } }, async () => ({ data: null, meta: {} }));
  };

  /** No connection of the test database sits inside a transaction (a leaked one would hold its key's lock). */
  const assertNoOpenTransaction = async () => {
    const { db } = testDb();
    const open = await db.sql<{ state: string }[]>`
      SELECT state FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`;
    assert.deepEqual([...open], []);
  };

  before(async () => {
    t = await startTestApp(inProcessOnly({ extraRoutes: testRoutes }));
    org = await createTestOrg();
  });
  after(() => t.close());

  describe('errors', () => {
    it('every response carries Request-Id, echoed in error.requestId', async () => {
      const res = await call(t.app, 'GET', '/v1/customers/not-there', { key: org.apiKey });
      assert.equal(res.status, 404);
      assert.match(String(res.headers['request-id']), /^req_[0-9A-Za-z]+$/);
      assert.deepEqual(res.body, {
        error: { code: 'customer_not_found', message: 'No customer with that id exists.', requestId: res.headers['request-id'] },
      });
    });

    it('400 invalid_json for a body that is not JSON', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: '{"type": "person", "name": ' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'invalid_json');
    });

    it('400 invalid_json for bytes that are not UTF-8, and nothing is stored in their place', async () => {
      const ref = `utf8-${newIdempotencyKey()}`;
      const payload = Buffer.concat([Buffer.from(`{"type":"person","externalReference":"${ref}","name":"a`), Buffer.from([0xff, 0xfe]), Buffer.from('b"}')]);
      const res = await t.app.inject({
        method: 'POST', url: '/v1/customers', payload,
        headers: { authorization: `Bearer ${org.apiKey}`, 'idempotency-key': newIdempotencyKey(), 'content-type': 'application/json' },
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, 'invalid_json');
      const { db } = testDb();
      assert.equal((await db.sql`SELECT 1 FROM customers WHERE organization_id = ${org.organizationId} AND external_reference = ${ref}`).length, 0);
    });

    it('400 validation_failed at the place of an unpaired surrogate escape; a paired one is text like any other', async () => {
      const lone = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: '{"type":"person","name":"a","metadata":{"k\\udc00":"v"}}' });
      assert.equal(lone.status, 400);
      assert.equal(lone.body.error.code, 'validation_failed');
      assert.deepEqual(lone.body.error.details, [{ path: '/metadata/k\udc00', message: 'must be well-formed Unicode text' }]);
      const value = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: '{"type":"person","name":"x\\ud800y"}' });
      assert.equal(value.status, 400);
      assert.deepEqual(value.body.error.details, [{ path: '/name', message: 'must be well-formed Unicode text' }]);
      const paired = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: '{"type":"person","name":"smil \\ud83d\\ude00"}' });
      assert.equal(paired.status, 201);
      assert.equal(paired.body.data.name, 'smil 😀');
    });

    it('400 validation_failed, not invalid_json, for valid JSON with a __proto__ or constructor.prototype property', async () => {
      const cases: [string, string][] = [
        ['{"type":"person","name":"x","__proto__":{}}', '/__proto__'],
        ['{"type":"person","name":"x","metadata":{"__proto__":"x"}}', '/metadata/__proto__'],
        ['{"type":"person","name":"x","constructor":{"prototype":{}}}', '/constructor/prototype'],
      ];
      for (const [body, path] of cases) {
        const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body });
        assert.equal(res.status, 400, body);
        assert.equal(res.body.error.code, 'validation_failed', body);
        assert.deepEqual(res.body.error.details, [{ path, message: 'is not an accepted property name' }], body);
      }
      const plain = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: '{"type":"person","name":"x","metadata":{"constructor":"y"}}' });
      assert.equal(plain.status, 201);
      assert.deepEqual(plain.body.data.metadata, { constructor: 'y' });
    });

    it('400 validation_failed with JSON Pointer details for a schema violation', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 7, extra: true } });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.deepEqual(
        res.body.error.details.map((d: { path: string }) => d.path).sort(),
        ['/extra', '/name'],
      );
      assert.equal(typeof res.body.error.message, 'string');
    });

    it('400 validation_failed for a body that is valid JSON but not an object', async () => {
      for (const body of ['[]', '"text"', '42', 'null']) {
        const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body });
        assert.equal(res.status, 400, body);
        assert.equal(res.body.error.code, 'validation_failed');
      }
    });

    it('a PATCH body of null is 400 validation_failed; a PATCH without a body changes nothing (200)', async () => {
      const c = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer })).body.data;
      const p = (await call(t.app, 'POST', '/v1/products', { key: org.apiKey, body: { sku: `RULE-${Date.now()}`, name: 'Rule product', unitPriceOere: 100, vatRateBps: 2500 } })).body.data;
      for (const url of [`/v1/customers/${c.id}`, `/v1/products/${p.id}`]) {
        const nul = await call(t.app, 'PATCH', url, { key: org.apiKey, body: 'null' });
        assert.equal(nul.status, 400, url);
        assert.equal(nul.body.error.code, 'validation_failed', url);
        const none = await call(t.app, 'PATCH', url, { key: org.apiKey });
        assert.equal(none.status, 200, url);
        const now = await call(t.app, 'GET', url, { key: org.apiKey });
        assert.equal(none.body.data.name, now.body.data.name, url);
      }
    });

    it('400 validation_failed for a body nested deeper than 32 levels (never a 500), however deep', async () => {
      for (const depth of [40, 5000, 50_000]) {
        const body = `{"type":"person","name":"x","metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`;
        const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body });
        assert.equal(res.status, 400, String(depth));
        assert.equal(res.body.error.code, 'validation_failed', String(depth));
      }
    });

    it('404 route_not_found on an unknown path, whatever its body', async () => {
      for (const [body, headers] of [
        ['{', {}],
        ['x'.repeat(1024 * 1024 + 10), {}],
        ['a=b', { 'content-type': 'application/x-www-form-urlencoded' }],
      ] as const) {
        const res = await call(t.app, 'POST', '/v1/nope', { key: org.apiKey, body, headers: { ...headers } });
        assert.equal(res.status, 404);
        assert.equal(res.body.error.code, 'route_not_found');
      }
    });

    it('400 validation_failed for an unknown query parameter or a body where the request is none', async () => {
      const c = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer })).body.data;
      const unknownQuery = await call(t.app, 'GET', `/v1/customers/${c.id}?expand=all`, { key: org.apiKey });
      assert.equal(unknownQuery.status, 400);
      assert.equal(unknownQuery.body.error.code, 'validation_failed');
      const ep = (await call(t.app, 'POST', '/v1/webhook-endpoints', { key: org.apiKey, body: { url: 'https://hooks.example.com/strict', eventTypes: ['invoice.paid'] } })).body.data;
      const withBody = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key: org.apiKey, body: { unexpected: true } });
      assert.equal(withBody.status, 400);
      assert.equal(withBody.body.error.code, 'validation_failed');
      const [row] = await testDb().db.sql<{ previous: boolean }[]>`SELECT previous_secret_enc IS NOT NULL AS previous FROM webhook_endpoints WHERE id = ${ep.id}`;
      assert.equal(row!.previous, false, 'the refused rotation rotated nothing');
      const empty = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key: org.apiKey, body: {} });
      assert.equal(empty.status, 200);
      const none = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey });
      assert.equal(none.status, 202);
    });

    it('415 unsupported_media_type for a body that is not application/json', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', {
        key: org.apiKey,
        body: 'type=person&name=X',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(res.status, 415);
      assert.equal(res.body.error.code, 'unsupported_media_type');
    });

    it('413 payload_too_large for a body over 1 MiB', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', {
        key: org.apiKey,
        body: JSON.stringify({ type: 'person', name: 'x', metadata: { a: 'x'.repeat(1024 * 1024) } }),
      });
      assert.equal(res.status, 413);
      assert.equal(res.body.error.code, 'payload_too_large');
    });

    it('404 route_not_found for an unknown path, with or without a key', async () => {
      for (const key of [org.apiKey, null]) {
        const res = await call(t.app, 'GET', '/v1/nothing-here', { key });
        assert.equal(res.status, 404);
        assert.equal(res.body.error.code, 'route_not_found');
      }
    });

    it('500 internal_error never shows a stack, SQL, address or path; the log has it', async () => {
      const res = await call(t.app, 'GET', '/v1/test/boom', { key: org.apiKey });
      assert.equal(res.status, 500);
      assert.equal(res.body.error.code, 'internal_error');
      assert.doesNotMatch(res.raw, /ECONNREFUSED|SELECT|\/srv|\.ts|at |10\.0\.0\.1/);
      assert.match(t.logs(), /ECONNREFUSED/);
      assert.ok(t.logs().includes(res.body.error.requestId));
    });
  });

  describe('authentication and scopes', () => {
    const cases: [string, Record<string, string>][] = [
      ['no Authorization header', {}],
      ['a Basic header', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['Bearer without a key', { authorization: 'Bearer ' }],
      ['a malformed key', { authorization: 'Bearer not-a-key' }],
      ['an unknown key', { authorization: 'Bearer sk_test_0000000000000000000000000000000' }],
    ];
    for (const [what, headers] of cases) {
      it(`401 unauthenticated with WWW-Authenticate for ${what}`, async () => {
        const res = await call(t.app, 'GET', '/v1/customers', { headers });
        assert.equal(res.status, 401);
        assert.equal(res.body.error.code, 'unauthenticated');
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      });
    }

    it('401 for a revoked key', async () => {
      const key = await createTestKey(org, ['customers:read']);
      const { db } = testDb();
      const [row] = await db.sql<{ id: string }[]>`SELECT id FROM api_keys WHERE organization_id = ${org.organizationId} ORDER BY id DESC LIMIT 1`;
      await db.tx((tx) => revokeApiKey(tx, row!.id));
      // This app instance never saw the key, so nothing is cached; the listener path is covered by the CLI test.
      const res = await call(t.app, 'GET', '/v1/customers', { key });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthenticated');
    });

    it('401 comes before validation and idempotency checks', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', { body: { bad: true }, idempotencyKey: null });
      assert.equal(res.status, 401);
    });

    it('403 insufficient_scope names the required scope, before the body is looked at @cluster', async () => {
      const key = await createTestKey(org, ['customers:read']);
      const res = await call(t.app, 'POST', '/v1/customers', { key, body: { nonsense: 1 } });
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'insufficient_scope');
      assert.deepEqual(res.body.error.details, [{ path: '', message: 'required scope: customers:write' }]);
      const discovery = await call(t.app, 'GET', '/v1', { key });
      assert.equal(discovery.status, 403);
      assert.match(discovery.body.error.message, /api:discovery/);
    });
  });

  describe('idempotency', () => {
    it('400 idempotency_key_missing on every mutating method without the header', async () => {
      const c = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer })).body.data;
      for (const [method, url, body] of [
        ['POST', '/v1/customers', customer],
        ['PATCH', `/v1/customers/${c.id}`, { name: 'x' }],
        ['POST', `/v1/customers/${c.id}/departments`, { name: 'x' }],
        ['DELETE', `/v1/customers/${c.id}/departments/${c.id}`, undefined],
      ] as const) {
        const res = await call(t.app, method, url, { key: org.apiKey, body, idempotencyKey: null });
        assert.equal(res.status, 400, `${method} ${url}`);
        assert.equal(res.body.error.code, 'idempotency_key_missing');
      }
    });

    it('400 idempotency_key_invalid outside 8..128 characters', async () => {
      for (const k of ['short7c', 'k'.repeat(129), ' '.repeat(10)]) {
        const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: k });
        assert.equal(res.status, 400, k);
        assert.equal(res.body.error.code, 'idempotency_key_invalid');
      }
      for (const k of ['k'.repeat(8), 'k'.repeat(128)]) {
        assert.equal((await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: k })).status, 201);
      }
    });

    it('any key of 8..128 characters is taken, spaces included (only the length is ruled)', async () => {
      const k = `with spaces ${newIdempotencyKey()}`;
      const first = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: k });
      assert.equal(first.status, 201);
      const again = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: k });
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.body.data.id, first.body.data.id);
    });

    it('replays the original status and body with meta.replayed and Idempotent-Replayed, without a second effect @cluster', async () => {
      const idem = newIdempotencyKey();
      const first = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: idem });
      assert.equal(first.status, 201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      // Key order in the body does not matter.
      const second = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { name: customer.name, type: customer.type }, idempotencyKey: idem });
      assert.equal(second.status, 201);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.headers.location, first.headers.location);
      assert.deepEqual(second.body, { data: first.body.data, meta: { replayed: true } });
      const [row] = await testDb().db.sql<{ count: number }[]>`SELECT count(*)::int AS count FROM customers WHERE id = ${first.body.data.id}`;
      assert.equal(row!.count, 1);
    });

    it('409 idempotency_conflict for the same key with another body, another path or other query flags', async () => {
      const idem = newIdempotencyKey();
      assert.equal((await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: idem })).status, 201);
      const before = (await testDb().db.sql`SELECT count(*)::int AS n FROM customers WHERE organization_id = ${org.organizationId}`)[0]!.n;
      const otherBody = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { ...customer, name: 'Other' }, idempotencyKey: idem });
      assert.equal(otherBody.status, 409);
      assert.equal(otherBody.body.error.code, 'idempotency_conflict');
      // POST /v1/customers takes no query flags: an unknown one is refused before the key is looked at.
      const unknownQuery = await call(t.app, 'POST', '/v1/customers?limit=5', { key: org.apiKey, body: customer, idempotencyKey: idem });
      assert.equal(unknownQuery.status, 400);
      assert.equal(unknownQuery.body.error.code, 'validation_failed');
      const inv = { customerId: (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer })).body.data.id, lines: [{ description: 'x', quantity: 1, unitPriceOere: 100 }] };
      const invKey = newIdempotencyKey();
      assert.equal((await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: inv, idempotencyKey: invKey })).status, 201);
      const otherQuery = await call(t.app, 'POST', '/v1/invoices?issue=false', { key: org.apiKey, body: inv, idempotencyKey: invKey });
      assert.equal(otherQuery.status, 409);
      assert.equal(otherQuery.body.error.code, 'idempotency_conflict');
      const c = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer })).body.data;
      const otherPath = await call(t.app, 'PATCH', `/v1/customers/${c.id}`, { key: org.apiKey, body: customer, idempotencyKey: idem });
      assert.equal(otherPath.status, 409);
      assert.equal(otherPath.body.error.code, 'idempotency_conflict');
      const after = (await testDb().db.sql`SELECT count(*)::int AS n FROM customers WHERE organization_id = ${org.organizationId}`)[0]!.n;
      assert.equal(after, before + 2); // only the customers created with fresh keys
    });

    it('a body rejected by validation does not consume the key', async () => {
      const idem = newIdempotencyKey();
      const bad = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person' }, idempotencyKey: idem });
      assert.equal(bad.status, 400);
      const good = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: idem });
      assert.equal(good.status, 201);
      assert.equal(good.headers['idempotent-replayed'], undefined);
    });

    it('a business rejection is stored with the key and replayed', async () => {
      const idem = newIdempotencyKey();
      const url = '/v1/customers/0190a8a0-0000-7000-8000-0000000000aa';
      const first = await call(t.app, 'PATCH', url, { key: org.apiKey, body: { name: 'x' }, idempotencyKey: idem });
      assert.equal(first.status, 404);
      const again = await call(t.app, 'PATCH', url, { key: org.apiKey, body: { name: 'x' }, idempotencyKey: idem });
      assert.equal(again.status, 404);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, { error: { ...first.body.error, requestId: again.headers['request-id'] } });
      assert.notEqual(again.headers['request-id'], first.headers['request-id']);
    });

    it('a request refused because a concurrent one with its key committed gets that request’s response', async () => {
      const idem = newIdempotencyKey();
      raceHash = requestFingerprint(t.deps.keyring, 'POST', '/v1/test/race', { n: 1 });
      const res = await call(t.app, 'POST', '/v1/test/race', { key: org.apiKey, body: { n: 1 }, idempotencyKey: idem });
      assert.equal(res.status, 201);
      assert.equal(res.headers['idempotent-replayed'], 'true');
      assert.equal(res.headers.location, '/v1/test/winner');
      assert.deepEqual(res.body, { data: { winner: true }, meta: { replayed: true } });
    });

    it('a deferred write that fails rolls back the whole effect, stores nothing and leaves no transaction open', async () => {
      const idem = newIdempotencyKey();
      const ref = `deferred-${idem}`;
      for (let i = 0; i < 2; i++) {
        const res = await call(t.app, 'POST', '/v1/test/deferred-fails', { key: org.apiKey, body: { ref }, idempotencyKey: idem });
        assert.equal(res.status, 500);
        assert.equal(res.body.error.code, 'internal_error');
      }
      const { db } = testDb();
      assert.equal((await db.sql`SELECT 1 FROM customers WHERE organization_id = ${org.organizationId} AND external_reference = ${ref}`).length, 0);
      assert.equal((await db.sql`SELECT 1 FROM idempotency_keys WHERE organization_id = ${org.organizationId} AND key = ${idem}`).length, 0);
      await assertNoOpenTransaction();
    });

    it('a store that meets a response committed meanwhile rolls back its effect and replays that response', async () => {
      const idem = newIdempotencyKey();
      const ref = `lost-${idem}`;
      raceHash = requestFingerprint(t.deps.keyring, 'POST', '/v1/test/lost-race', { ref });
      const res = await call(t.app, 'POST', '/v1/test/lost-race', { key: org.apiKey, body: { ref }, idempotencyKey: idem });
      assert.equal(res.status, 201);
      assert.equal(res.headers['idempotent-replayed'], 'true');
      assert.equal(res.headers.location, '/v1/test/winner');
      assert.deepEqual(res.body, { data: { winner: true }, meta: { replayed: true } });
      const { db } = testDb();
      assert.equal((await db.sql`SELECT 1 FROM customers WHERE organization_id = ${org.organizationId} AND external_reference = ${ref}`).length, 0);
      await assertNoOpenTransaction();
    });

    it('replays and in-progress refusals leave no transaction open on the pool', async () => {
      const idem = newIdempotencyKey();
      for (let i = 0; i < 15; i++) {
        const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: idem });
        assert.equal(res.status, 201);
      }
      const other = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { ...customer, name: 'Other' }, idempotencyKey: idem });
      assert.equal(other.status, 409);
      assert.equal(other.body.error.code, 'idempotency_conflict');
      await assertNoOpenTransaction();
    });

    it('the fingerprint ignores a trailing slash, as the router does', async () => {
      const idem = newIdempotencyKey();
      const first = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: idem });
      const second = await call(t.app, 'POST', '/v1/customers/', { key: org.apiKey, body: customer, idempotencyKey: idem });
      assert.equal(second.status, 201);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.equal(second.body.data.id, first.body.data.id);
    });

    it('keys are scoped per organisation', async () => {
      const other = await createTestOrg();
      const idem = newIdempotencyKey();
      const a = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer, idempotencyKey: idem });
      const b = await call(t.app, 'POST', '/v1/customers', { key: other.apiKey, body: customer, idempotencyKey: idem });
      assert.equal(a.status, 201);
      assert.equal(b.status, 201);
      assert.notEqual(a.body.data.id, b.body.data.id);
      assert.equal(b.headers['idempotent-replayed'], undefined);
    });

    it('409 idempotency_in_progress while the first request with the key is still running', async () => {
      const idem = newIdempotencyKey();
      const entered = new Promise<void>((resolve) => (enteredSlow = resolve));
      const first = call(t.app, 'POST', '/v1/test/slow', { key: org.apiKey, body: {}, idempotencyKey: idem });
      await entered;
      const second = await call(t.app, 'POST', '/v1/test/slow', { key: org.apiKey, body: {}, idempotencyKey: idem });
      assert.equal(second.status, 409);
      assert.equal(second.body.error.code, 'idempotency_in_progress');
      assert.equal(second.headers['retry-after'], '1');
      releaseSlow();
      const done = await first;
      assert.equal(done.status, 201);
      const third = await call(t.app, 'POST', '/v1/test/slow', { key: org.apiKey, body: {}, idempotencyKey: idem });
      assert.equal(third.status, 201);
      assert.equal(third.headers['idempotent-replayed'], 'true');
    });

    it('20 concurrent requests with one key produce exactly one customer @cluster', async () => {
      const idem = newIdempotencyKey();
      const body = { type: 'company', name: 'Concurrent ApS', externalReference: idem };
      const results = await Promise.all(
        Array.from({ length: 20 }, () => call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body, idempotencyKey: idem })),
      );
      const created = results.filter((r) => r.status === 201);
      assert.ok(created.length >= 1);
      for (const r of results) assert.ok(r.status === 201 || (r.status === 409 && r.body.error.code === 'idempotency_in_progress'), String(r.status));
      assert.equal(new Set(created.map((r) => r.body.data.id)).size, 1);
      const rows = await testDb().db.sql`SELECT id FROM customers WHERE organization_id = ${org.organizationId} AND external_reference = ${idem}`;
      assert.equal(rows.length, 1);
    });
  });

  describe('rate limits', () => {
    let limited: TestApp;
    before(async () => {
      // Time stands still for the limiter, so no token refills between requests however slow the machine is.
      limited = await startTestApp({ extraRoutes: testRoutes, rateLimitClock: () => 1_000_000 }, { rateLimitDefault: 5, rateLimitDocument: 1 });
    });
    after(() => limited.close());

    it('answers 429 rate_limited with Retry-After once a key has spent its burst (2 × rate)', async () => {
      const key = await createTestKey(org, ['customers:read']);
      const responses = [];
      for (let i = 0; i < 11; i++) responses.push(await call(limited.app, 'GET', '/v1/customers?limit=1', { key }));
      assert.deepEqual(responses.slice(0, 10).map((r) => r.status), Array(10).fill(200));
      const last = responses[10]!;
      assert.equal(last.status, 429);
      assert.equal(last.body.error.code, 'rate_limited');
      assert.ok(Number(last.headers['retry-after']) >= 1);
      assert.equal(last.headers['ratelimit-limit'], '5');
      assert.equal(last.headers['ratelimit-remaining'], '0');
      // Another key of the same organisation has its own bucket.
      const fresh = await createTestKey(org, ['customers:read']);
      const ok = await call(limited.app, 'GET', '/v1/customers?limit=1', { key: fresh });
      assert.equal(ok.status, 200);
      // The bucket holds 9 more, but what is reported never exceeds the stated limit.
      assert.equal(ok.headers['ratelimit-remaining'], '5');
      const remaining = responses.map((r) => Number(r.headers['ratelimit-remaining']));
      assert.deepEqual(remaining, [5, 5, 5, 5, 5, 4, 3, 2, 1, 0, 0]);
    });

    it('the document class has its own, smaller budget', async () => {
      const key = await createTestKey(org, ['customers:read']);
      assert.equal((await call(limited.app, 'GET', '/v1/test/document', { key })).status, 200);
      assert.equal((await call(limited.app, 'GET', '/v1/test/document', { key })).status, 200);
      const third = await call(limited.app, 'GET', '/v1/test/document', { key });
      assert.equal(third.status, 429);
      assert.equal(third.headers['ratelimit-limit'], '1');
      // The default class of the same key is untouched.
      assert.equal((await call(limited.app, 'GET', '/v1/customers?limit=1', { key })).status, 200);
    });
  });
});
