import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { call, createTestOrg, startTestApp, TEST_MASTER_KEY, testDb, type TestApp } from '../helpers/context.ts';

/** A process killed in the middle of an issue leaves no gap, no duplicate and no half-issued invoice. */
describe('issuing survives a killed process', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('rolls the issue back when the process dies after taking a number, and the series continues without a gap', async () => {
    const org = await createTestOrg();
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'P' } })).body.data.id;
    const lines = [{ description: 'x', quantity: 1, unitPriceOere: 100 }];
    const first = (await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines } })).body.data;
    assert.equal(first.number, 1);
    const victim = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines } })).body.data;

    const child = spawn(
      process.execPath,
      ['test/db/fixtures/issue-and-hang.ts', process.env.TEST_DATABASE_URL!, TEST_MASTER_KEY.toString('hex'), org.organizationId, victim.id],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('rendering') && resolve());
      child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
    });
    // The child holds the series row and the draft, mid-issue. Kill it without a chance to clean up.
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;

    const { sql } = testDb().db;
    // PostgreSQL notices the dead connection and rolls its transaction back.
    for (let i = 0; i < 100; i++) {
      const [busy] = await sql`SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'number_series' AND l.granted AND l.mode = 'RowExclusiveLock'`;
      if (!busy) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = (await call(t.app, 'GET', `/v1/invoices/${victim.id}`, { key: org.apiKey })).body.data;
    assert.equal(after.status, 'draft');
    assert.equal(after.number, null);
    const [series] = await sql<{ next_number: number }[]>`SELECT next_number FROM number_series WHERE organization_id = ${org.organizationId}`;
    assert.equal(series!.next_number, 2, 'the number taken by the dead process was given back');
    const [docs] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM documents WHERE organization_id = ${org.organizationId}`;
    assert.equal(docs!.n, 1, 'no orphan document');

    const retried = await call(t.app, 'POST', `/v1/invoices/${victim.id}/issue`, { key: org.apiKey });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.data.number, 2);
  });
});
