import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, TEST_MASTER_KEY, type TestApp, type TestOrg } from '../helpers/context.ts';
import { addMember } from '../../services/members/member-queries.ts';
import { SCOPES } from '../../contracts/scopes.ts';
import { runScript } from '../helpers/scripts.ts';

describe('members and roles', () => {
  let t: TestApp;
  let org: TestOrg;
  const add = async (o: TestOrg, name: string, role: string, email = `${name.toLowerCase()}@firma.dk`) => {
    const { db, keyring } = testDb();
    const m = await db.tx((tx) => addMember(tx, keyring, { organizationId: o.organizationId, name, email, role }));
    return m!;
  };
  const patch = (userId: string, role: unknown, o: TestOrg = org) => call(t.app, 'PATCH', `/v1/members/${userId}`, { key: o.apiKey, body: { role } });

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Medlem ApS' });
  });
  after(() => t.close());

  it('GET /v1/roles: admin every scope, bookkeeper all but three, viewer the :read scopes and api:discovery', async () => {
    const res = await call(t.app, 'GET', '/v1/roles', { key: org.apiKey });
    assert.equal(res.status, 200);
    const [admin, bookkeeper, viewer] = res.body.data;
    assert.deepEqual(res.body.data.map((r: { key: string }) => r.key), ['admin', 'bookkeeper', 'viewer']);
    assert.deepEqual(admin.scopes, [...SCOPES]);
    assert.deepEqual(bookkeeper.scopes, SCOPES.filter((s) => !['members:manage', 'settings:write', 'webhooks:manage'].includes(s)));
    assert.deepEqual(viewer.scopes, SCOPES.filter((s) => s.endsWith(':read') || s === 'api:discovery'));
    assert.equal(typeof admin.name, 'string');
    assert.deepEqual(res.body.meta, { nextCursor: null });
    // A list like every other: pages by limit and cursor.
    const first = await call(t.app, 'GET', '/v1/roles?limit=2', { key: org.apiKey });
    assert.deepEqual(first.body.data.map((r: { key: string }) => r.key), ['admin', 'bookkeeper']);
    assert.equal(typeof first.body.meta.nextCursor, 'string');
    const second = await call(t.app, 'GET', `/v1/roles?limit=2&cursor=${first.body.meta.nextCursor}`, { key: org.apiKey });
    assert.deepEqual(second.body.data.map((r: { key: string }) => r.key), ['viewer']);
    assert.equal(second.body.meta.nextCursor, null);
    const forged = await call(t.app, 'GET', '/v1/roles?cursor=AAAA', { key: org.apiKey });
    assert.equal(forged.status, 400);
    assert.equal(forged.body.error.code, 'invalid_cursor');
    const tooMany = await call(t.app, 'GET', '/v1/roles?limit=201', { key: org.apiKey });
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.error.code, 'validation_failed');
    const noScope = await call(t.app, 'GET', '/v1/roles', { key: await createTestKey(org, ['customers:read']) });
    assert.equal(noScope.status, 403);
  });

  it('GET /v1/members: oldest first, cursor pages, e-mail as written; other organisations are not listed', async () => {
    const o = await createTestOrg();
    const a = await add(o, 'Anna', 'admin', 'Anna@Firma.dk');
    const b = await add(o, 'Bo', 'viewer');
    const c = await add(o, 'Cai', 'bookkeeper');
    await add(org, 'Other', 'admin');
    const first = await call(t.app, 'GET', '/v1/members?limit=2', { key: o.apiKey });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.data, [a, b]);
    assert.deepEqual(Object.keys(a).sort(), ['createdAt', 'email', 'name', 'role', 'userId']);
    assert.equal(a.email, 'Anna@Firma.dk');
    const second = await call(t.app, 'GET', `/v1/members?limit=2&cursor=${first.body.meta.nextCursor}`, { key: o.apiKey });
    assert.deepEqual(second.body.data, [c]);
    assert.equal(second.body.meta.nextCursor, null);
    const bad = await call(t.app, 'GET', '/v1/members?cursor=abc', { key: o.apiKey });
    assert.equal(bad.body.error.code, 'invalid_cursor');
    // One address is one member, whatever its case.
    await assert.rejects(add(o, 'Anna 2', 'viewer', 'anna@firma.dk'), /already a member/);
  });

  it('PATCH /v1/members/{userId}: changes the role; unknown role 422, unknown or foreign member 404, the last admin 422', async () => {
    const o = await createTestOrg();
    const a = await add(o, 'Admin', 'admin');
    const v = await add(o, 'Viewer', 'viewer');
    const foreign = await add(org, 'Foreign', 'viewer');
    const up = await patch(v.userId, 'bookkeeper', o);
    assert.equal(up.status, 200, up.raw);
    assert.deepEqual(up.body.data, { ...v, role: 'bookkeeper' });
    const unknown = await patch(v.userId, 'owner', o);
    assert.equal(unknown.status, 422);
    assert.equal(unknown.body.error.code, 'unknown_role');
    for (const id of [foreign.userId, '00000000-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const res = await patch(id, 'viewer', o);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'member_not_found');
    }
    const last = await patch(a.userId, 'viewer', o);
    assert.equal(last.status, 422);
    assert.equal(last.body.error.code, 'last_admin');
    assert.equal((await patch(a.userId, 'admin', o)).status, 200);
    const tooLong = await patch(v.userId, 'x'.repeat(61), o);
    assert.equal(tooLong.status, 400);
    assert.equal((await patch(v.userId, '', o)).status, 400);
    const scope = await call(t.app, 'PATCH', `/v1/members/${v.userId}`, { key: await createTestKey(o, ['members:read']), body: { role: 'viewer' } });
    assert.equal(scope.status, 403);
  });

  it('two concurrent demotions of the last two admins: one succeeds, the other is 422 last_admin @cluster', async () => {
    for (let round = 0; round < 5; round++) {
      const o = await createTestOrg();
      const a = await add(o, 'A', 'admin');
      const b = await add(o, 'B', 'admin');
      const results = await Promise.all([patch(a.userId, 'viewer', o), patch(b.userId, 'viewer', o)]);
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 422]);
      const [row] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM members WHERE organization_id = ${o.organizationId} AND role = 'admin'`;
      assert.equal(row?.n, 1);
    }
  });

  it('npm run admin -- add-member adds a member the API lists; wrong flags exit 2', async () => {
    const o = await createTestOrg();
    const env = { ...process.env, DATABASE_URL: process.env.TEST_DATABASE_URL!, DATA_ENCRYPTION_KEY: TEST_MASTER_KEY.toString('hex') };
    const run = await runScript('services/admin/cli.ts', ['add-member', '--org', o.organizationId, '--email', 'Eva@Firma.dk', '--name', 'Eva', '--role', 'bookkeeper', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const printed = JSON.parse(run.stdout) as Record<string, unknown>;
    const listed = await call(t.app, 'GET', '/v1/members', { key: o.apiKey });
    assert.deepEqual(listed.body.data, [{ userId: printed.userId, name: 'Eva', email: 'Eva@Firma.dk', role: 'bookkeeper', createdAt: printed.createdAt }]);
    const again = await runScript('services/admin/cli.ts', ['add-member', '--org', o.organizationId, '--email', 'eva@firma.dk', '--name', 'Eva', '--role', 'viewer'], env);
    assert.equal(again.code, 1);
    const badRole = await runScript('services/admin/cli.ts', ['add-member', '--org', o.organizationId, '--email', 'x@firma.dk', '--name', 'X', '--role', 'owner'], env);
    assert.equal(badRole.code, 2);
    assert.match(badRole.stderr, /--role must be one of admin, bookkeeper, viewer/);
  });
});
