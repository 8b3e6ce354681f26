import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type ApiResponse, type TestApp, type TestOrg } from '../helpers/context.ts';
import { SCOPES } from '../../contracts/scopes.ts';
import { STANDARD_FLOW } from '../../services/reminder-flows/standard-flow.ts';

/** /v1/reminder-flows (docs/reminder-flows.md) through the real app. */
describe('reminder flows', () => {
  let t: TestApp;
  const sql = () => testDb().db.sql;
  const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  interface ProOrg extends TestOrg {
    /** A second key of the organisation with every scope: the four-eyes approver. */
    otherKey: string;
    otherKeyId: string;
  }

  async function proOrg(): Promise<ProOrg> {
    const org = await createTestOrg({ plan: 'pro' });
    const otherKey = await createTestKey(org, [...SCOPES]);
    const [row] = await sql()<{ id: string }[]>`SELECT id FROM api_keys WHERE organization_id = ${org.organizationId} AND id <> ${org.keyId}`;
    return { ...org, otherKey, otherKeyId: row!.id };
  }

  function assertError(res: ApiResponse, status: number, code: string): void {
    assert.equal(res.status, status, res.raw);
    assert.equal(res.body.error.code, code, res.raw);
    assert.equal(res.body.error.requestId, res.headers['request-id']);
  }

  const graph = (days = [7, 14, 21]) => ({ steps: days.map((d, i) => ({ id: `r${i + 1}`, action: 'reminder', daysAfterDue: d })) });
  const filled = (days = [7, 14, 21]) => ({
    steps: days.map((d, i) => ({ id: `r${i + 1}`, action: 'reminder', daysAfterDue: d, fee: 'statutory', channel: 'email_or_letter' })),
  });
  const create = (org: TestOrg, body: unknown, key = org.apiKey) => call(t.app, 'POST', '/v1/reminder-flows', { key, body });
  const approve = (key: string, flowKey: string, v: number) => call(t.app, 'POST', `/v1/reminder-flows/${flowKey}/versions/${v}/approve`, { key });
  const activate = (key: string, flowKey: string, v: number, active: boolean) =>
    call(t.app, 'POST', `/v1/reminder-flows/${flowKey}/versions/${v}/activate`, { key, body: { active } });
  const get = (key: string, flowKey: string, v: number | string, query = '') => call(t.app, 'GET', `/v1/reminder-flows/${flowKey}/versions/${v}${query}`, { key });

  /** A version created by the org's first key, approved by its second, and activated. */
  async function activeVersion(org: ProOrg, flowKey: string): Promise<number> {
    const created = await create(org, { key: flowKey, name: `Flow ${flowKey}`, graph: graph() });
    assert.equal(created.status, 201, created.raw);
    const v = created.body.data.version as number;
    assert.equal((await approve(org.otherKey, flowKey, v)).status, 200);
    const res = await activate(org.apiKey, flowKey, v, true);
    assert.equal(res.status, 200, res.raw);
    return v;
  }

  describe('the plan', () => {
    it('answers 403 plan_required on every route without pro, after authentication and before scope, key, validation and 404', async () => {
      const org = await createTestOrg();
      const noScopes = await createTestKey(org, ['customers:read']);
      const requests: [string, string, unknown][] = [
        ['GET', '/v1/reminder-flows', undefined],
        ['POST', '/v1/reminder-flows', { key: 'x', bogus: true }],
        ['GET', '/v1/reminder-flows/NOPE/versions/abc?standard=maybe', undefined],
        ['POST', '/v1/reminder-flows/NOPE/versions/9/approve', undefined],
        ['POST', '/v1/reminder-flows/NOPE/versions/9/activate', { active: 'yes' }],
      ];
      for (const [method, url, body] of requests) {
        for (const key of [org.apiKey, noScopes]) {
          // No Idempotency-Key, an invalid body, an unknown flow, a key without the scope: still the plan first.
          const res = await call(t.app, method, url, { key, body, idempotencyKey: null });
          assertError(res, 403, 'plan_required');
        }
        assertError(await call(t.app, method, url, { key: null, body }), 401, 'unauthenticated');
      }
    });

    it('checks the scope next on the pro plan', async () => {
      const org = await proOrg();
      const readOnly = await createTestKey(org, ['reminders:read']);
      assertError(await create(org, { key: 'ABC', name: 'x', graph: graph() }, readOnly), 403, 'insufficient_scope');
      const none = await createTestKey(org, ['customers:read']);
      assertError(await call(t.app, 'GET', '/v1/reminder-flows', { key: none }), 403, 'insufficient_scope');
    });

    it('opens the routes from the next request once the plan changes to pro @cluster', async () => {
      const org = await createTestOrg();
      assertError(await call(t.app, 'GET', '/v1/reminder-flows', { key: org.apiKey }), 403, 'plan_required');
      const { updateOrganization } = await import('../../services/organizations/update-organization.ts');
      await testDb().db.tx((tx) => updateOrganization(tx, org.organizationId, { plan: 'pro' }));
      // This process's cache is cleared by the notification; a fresh app (no cache) sees the plan at once.
      const fresh = await startTestApp();
      try {
        const res = await call(fresh.app, 'GET', '/v1/reminder-flows', { key: org.apiKey });
        assert.equal(res.status, 200, res.raw);
      } finally {
        await fresh.close();
      }
    });
  });

  describe('versions', () => {
    it('creates version 1 of a new key and the next version of an existing key, with Location and exact bodies', async () => {
      const org = await proOrg();
      const res = await create(org, { key: 'B2C_DEFAULT', name: 'B2C', graph: graph() });
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.headers.location, '/v1/reminder-flows/B2C_DEFAULT/versions/1');
      assert.match(res.body.data.createdAt, ISO);
      assert.deepEqual(res.body, {
        data: {
          key: 'B2C_DEFAULT', version: 1, name: 'B2C', graph: filled(), state: 'draft',
          createdBy: { type: 'api_key', id: org.keyId }, approvedBy: null, activatedBy: null,
          createdAt: res.body.data.createdAt, approvedAt: null, activatedAt: null,
        },
        meta: {},
      });
      const second = await create(org, { key: 'B2C_DEFAULT', name: 'B2C v2', graph: graph([5, 10, 20]) }, org.otherKey);
      assert.equal(second.status, 201, second.raw);
      assert.equal(second.headers.location, '/v1/reminder-flows/B2C_DEFAULT/versions/2');
      assert.equal(second.body.data.version, 2);
      assert.deepEqual(second.body.data.createdBy, { type: 'api_key', id: org.otherKeyId });

      const read = await get(org.apiKey, 'B2C_DEFAULT', 1);
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, res.body);
      // Another organisation's flow is not there.
      const stranger = await proOrg();
      assertError(await get(stranger.apiKey, 'B2C_DEFAULT', 1), 404, 'reminder_flow_not_found');
    });

    it('refuses a bad key or name by schema (400) and a bad graph with every problem (422 invalid_flow_graph)', async () => {
      const org = await proOrg();
      for (const body of [
        { key: 'ab', name: 'x', graph: graph() },
        { key: 'lower_case', name: 'x', graph: graph() },
        { key: 'A'.repeat(61), name: 'x', graph: graph() },
        { key: 'ABC', name: '', graph: graph() },
        { key: 'ABC', name: 'x'.repeat(121), graph: graph() },
        { key: 'ABC', name: 'x' },
        { key: 'ABC', name: 'x', graph: graph(), extra: 1 },
      ]) {
        assertError(await create(org, body), 400, 'validation_failed');
      }
      const bad = await create(org, {
        key: 'BAD', name: 'x',
        graph: { steps: [{ id: 'a', action: 'payment_reminder', daysAfterDue: 3, fee: 0 }, { id: 'b', action: 'reminder', daysAfterDue: 3 }] },
      });
      assertError(bad, 422, 'invalid_flow_graph');
      assert.deepEqual(bad.body.error.details, [
        { path: '/graph/steps/0/fee', message: 'is allowed on reminder steps only, not on payment_reminder' },
        { path: '/graph/steps/1/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (3)" },
      ]);
      assertError(await create(org, { key: 'BAD', name: 'x', graph: 'steps' }), 422, 'invalid_flow_graph');
      assertError(await get(org.apiKey, 'BAD', 1), 404, 'reminder_flow_not_found');
    });

    it('answers 404 reminder_flow_not_found for an unknown key, version, or a version that is no number', async () => {
      const org = await proOrg();
      await create(org, { key: 'KNOWN', name: 'x', graph: graph() });
      for (const [k, v] of [['UNKNOWN', '1'], ['KNOWN', '2'], ['KNOWN', '0'], ['KNOWN', 'one'], ['KNOWN', '1.0'], ['known', '1']] as const) {
        assertError(await get(org.apiKey, k, v), 404, 'reminder_flow_not_found');
        assertError(await approve(org.otherKey, k, v as unknown as number), 404, 'reminder_flow_not_found');
        assertError(await activate(org.apiKey, k, v as unknown as number, true), 404, 'reminder_flow_not_found');
      }
    });

    it('reads the platform STANDARD flow with ?standard=true', async () => {
      const org = await proOrg();
      const res = await get(org.apiKey, 'STANDARD', 1, '?standard=true');
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, {
        data: {
          key: 'STANDARD', version: 1, name: 'Statutory standard',
          graph: {
            steps: [
              { id: 'reminder_1', action: 'reminder', daysAfterDue: 7, fee: 'statutory', channel: 'email_or_letter' },
              { id: 'reminder_2', action: 'reminder', daysAfterDue: 14, fee: 'statutory', channel: 'email_or_letter' },
              { id: 'reminder_3', action: 'reminder', daysAfterDue: 21, fee: 'statutory', channel: 'email_or_letter' },
            ],
          },
          state: 'approved', createdBy: null, approvedBy: null, activatedBy: null, createdAt: null, approvedAt: null, activatedAt: null,
        },
        meta: {},
      });
      assert.deepEqual(res.body.data, STANDARD_FLOW);
      assertError(await get(org.apiKey, 'STANDARD', 2, '?standard=true'), 404, 'reminder_flow_not_found');
      assertError(await get(org.apiKey, 'OTHER', 1, '?standard=true'), 404, 'reminder_flow_not_found');
      // Without the flag, STANDARD is an ordinary key of the organisation (none here).
      assertError(await get(org.apiKey, 'STANDARD', 1), 404, 'reminder_flow_not_found');
      assertError(await get(org.apiKey, 'STANDARD', 1, '?standard=maybe'), 400, 'validation_failed');
    });
  });

  describe('four-eyes, activation and transitions', () => {
    it('approves with another key of the organisation, never the creating key', async () => {
      const org = await proOrg();
      await create(org, { key: 'FOUR_EYES', name: 'x', graph: graph() });
      assertError(await approve(org.apiKey, 'FOUR_EYES', 1), 422, 'approver_is_creator');
      const res = await approve(org.otherKey, 'FOUR_EYES', 1);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.data.state, 'approved');
      assert.deepEqual(res.body.data.approvedBy, { type: 'api_key', id: org.otherKeyId });
      assert.match(res.body.data.approvedAt, ISO);
      assert.equal(res.body.data.activatedBy, null);
      // Approving again: not a draft any more.
      assertError(await approve(org.otherKey, 'FOUR_EYES', 1), 422, 'invalid_transition');
    });

    it('activates an approved version and moves the previously active version (another key) to inactive @cluster', async () => {
      const org = await proOrg();
      await activeVersion(org, 'FIRST');
      await create(org, { key: 'SECOND', name: 'Second', graph: graph() }, org.otherKey);
      assert.equal((await approve(org.apiKey, 'SECOND', 1)).status, 200);
      const res = await activate(org.otherKey, 'SECOND', 1, true);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.data.state, 'active');
      assert.deepEqual(res.body.data.activatedBy, { type: 'api_key', id: org.otherKeyId });
      assert.match(res.body.data.activatedAt, ISO);
      const first = await get(org.apiKey, 'FIRST', 1);
      assert.equal(first.body.data.state, 'inactive');
      assert.deepEqual(first.body.data.activatedBy, { type: 'api_key', id: org.keyId });
      const [n] = await sql()<{ n: number }[]>`
        SELECT count(*)::int AS n FROM reminder_flow_versions WHERE organization_id = ${org.organizationId} AND state = 'active'`;
      assert.equal(n!.n, 1);
      // Reactivating the inactive one swaps them back; deactivating leaves none active.
      assert.equal((await activate(org.apiKey, 'FIRST', 1, true)).body.data.state, 'active');
      assert.equal((await get(org.apiKey, 'SECOND', 1)).body.data.state, 'inactive');
      const off = await activate(org.apiKey, 'FIRST', 1, false);
      assert.equal(off.status, 200);
      assert.equal(off.body.data.state, 'inactive');
      const list = await call(t.app, 'GET', '/v1/reminder-flows', { key: org.apiKey });
      assert.deepEqual(list.body.data.map((f: { activeVersion: number | null }) => f.activeVersion), [null, null]);
    });

    it('refuses every other transition with 422 invalid_transition', async () => {
      const org = await proOrg();
      await create(org, { key: 'STATES', name: 'x', graph: graph() });
      assertError(await activate(org.apiKey, 'STATES', 1, true), 422, 'invalid_transition'); // draft → active
      assertError(await activate(org.apiKey, 'STATES', 1, false), 422, 'invalid_transition'); // draft → inactive
      await approve(org.otherKey, 'STATES', 1);
      assertError(await activate(org.apiKey, 'STATES', 1, false), 422, 'invalid_transition'); // approved → inactive
      await activate(org.apiKey, 'STATES', 1, true);
      assertError(await activate(org.apiKey, 'STATES', 1, true), 422, 'invalid_transition'); // active → active
      assertError(await approve(org.otherKey, 'STATES', 1), 422, 'invalid_transition'); // active → approved
      await activate(org.apiKey, 'STATES', 1, false);
      assertError(await activate(org.apiKey, 'STATES', 1, false), 422, 'invalid_transition'); // inactive → inactive
      assertError(await approve(org.otherKey, 'STATES', 1), 422, 'invalid_transition'); // inactive → approved
      assertError(await activate(org.apiKey, 'STATES', 1, 'yes' as unknown as boolean), 400, 'validation_failed');
    });
  });

  describe('the list', () => {
    it('lists one item per key in key order, in cursor pages', async () => {
      const org = await proOrg();
      for (const k of ['DELTA', 'ALPHA', 'CHARLIE', 'BRAVO', 'ECHO']) await create(org, { key: k, name: `${k} 1`, graph: graph() });
      await create(org, { key: 'BRAVO', name: 'BRAVO 2', graph: graph() });
      await approve(org.otherKey, 'CHARLIE', 1);
      await activate(org.apiKey, 'CHARLIE', 1, true);
      const first = await call(t.app, 'GET', '/v1/reminder-flows?limit=2', { key: org.apiKey });
      assert.equal(first.status, 200, first.raw);
      assert.deepEqual(first.body.data, [
        { key: 'ALPHA', name: 'ALPHA 1', latestVersion: 1, activeVersion: null },
        { key: 'BRAVO', name: 'BRAVO 2', latestVersion: 2, activeVersion: null },
      ]);
      assert.equal(typeof first.body.meta.nextCursor, 'string');
      const second = await call(t.app, 'GET', `/v1/reminder-flows?limit=2&cursor=${first.body.meta.nextCursor}`, { key: org.apiKey });
      assert.deepEqual(second.body.data, [
        { key: 'CHARLIE', name: 'CHARLIE 1', latestVersion: 1, activeVersion: 1 },
        { key: 'DELTA', name: 'DELTA 1', latestVersion: 1, activeVersion: null },
      ]);
      const third = await call(t.app, 'GET', `/v1/reminder-flows?limit=2&cursor=${second.body.meta.nextCursor}`, { key: org.apiKey });
      assert.deepEqual(third.body, { data: [{ key: 'ECHO', name: 'ECHO 1', latestVersion: 1, activeVersion: null }], meta: { nextCursor: null } });
      // A cursor of another organisation, or made up, is invalid_cursor.
      const other = await proOrg();
      assertError(await call(t.app, 'GET', `/v1/reminder-flows?cursor=${first.body.meta.nextCursor}`, { key: other.apiKey }), 400, 'invalid_cursor');
      assertError(await call(t.app, 'GET', '/v1/reminder-flows?cursor=abc', { key: org.apiKey }), 400, 'invalid_cursor');
      const empty = await call(t.app, 'GET', '/v1/reminder-flows', { key: other.apiKey });
      assert.deepEqual(empty.body, { data: [], meta: { nextCursor: null } });
    });
  });

  describe('pinning', () => {
    async function issueInvoice(org: TestOrg): Promise<string> {
      const cust = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde ApS', email: 'k@kunde.example' } });
      assert.equal(cust.status, 201, cust.raw);
      const res = await call(t.app, 'POST', '/v1/invoices?issue=true', {
        key: org.apiKey,
        body: { customerId: cust.body.data.id, lines: [{ description: 'Ydelse', quantity: 1, unitPriceOere: 10_000, vatRateBps: 2500 }] },
      });
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.body.data.status, 'issued');
      return res.body.data.id as string;
    }
    const pinned = async (invoiceId: string): Promise<{ key: string; version: number } | null> => {
      const [row] = await sql()<{ flow_key: string | null; version: number | null }[]>`
        SELECT f.flow_key, f.version FROM invoices i
        LEFT JOIN reminder_flow_versions f ON f.organization_id = i.organization_id AND f.id = i.reminder_flow_version_id
        WHERE i.id = ${invoiceId}`;
      return row!.flow_key === null ? null : { key: row!.flow_key, version: row!.version! };
    };

    it('pins an invoice at issue to the active version; a later activation does not move it', async () => {
      const org = await proOrg();
      const before = await issueInvoice(org);
      assert.equal(await pinned(before), null);
      await activeVersion(org, 'PIN_A');
      const a = await issueInvoice(org);
      assert.deepEqual(await pinned(a), { key: 'PIN_A', version: 1 });
      await activeVersion(org, 'PIN_B');
      const b = await issueInvoice(org);
      assert.deepEqual(await pinned(a), { key: 'PIN_A', version: 1 });
      assert.deepEqual(await pinned(b), { key: 'PIN_B', version: 1 });
      assert.equal(await pinned(before), null);
      // A draft is not pinned, and the invoice body shows nothing new.
      const draft = await call(t.app, 'GET', `/v1/invoices/${a}`, { key: org.apiKey });
      assert.ok(!JSON.stringify(draft.body).includes('PIN_A'));
      await activate(org.apiKey, 'PIN_B', 1, false);
      const none = await issueInvoice(org);
      assert.equal(await pinned(none), null);
      assert.deepEqual(await pinned(b), { key: 'PIN_B', version: 1 });
    });
  });
});
