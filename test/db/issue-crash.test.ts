import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { finishIssue } from '../../services/invoices/finish-issue.ts';
import { dueWakes } from '../../services/clock/wake-index.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { call, createTestOrg, newIdempotencyKey, startTestApp, TEST_MASTER_KEY, testDb, testRenderer, type TestApp, type TestOrg } from '../helpers/context.ts';

/**
 * A process killed at any point of an issue leaves no gap, no duplicate and no half-issued invoice: killed before
 * the reservation commits, the issue rolls back and the number is given back; killed after, the issue is finished
 * (by the request's retry or by the workflows process) with the reserved number.
 */
describe('issuing survives a killed process', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const lines = [{ description: 'x', quantity: 1, unitPriceOere: 100 }];

  async function setUp(): Promise<{ org: TestOrg; victim: string }> {
    const org = await createTestOrg();
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'P' } })).body.data.id;
    const first = (await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines } })).body.data;
    assert.equal(first.number, 1);
    const victim = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines } })).body.data.id as string;
    return { org, victim };
  }

  /** Runs the fixture until it reports where it stopped, then kills it without a chance to clean up. */
  async function issueAndKill(org: TestOrg, invoiceId: string, key: string, stopAt: 'reserve' | 'render'): Promise<void> {
    const child = spawn(
      process.execPath,
      ['test/db/fixtures/issue-and-hang.ts', process.env.TEST_DATABASE_URL!, TEST_MASTER_KEY.toString('hex'), org.organizationId, invoiceId, key, stopAt],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('stopped') && resolve());
      child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
    });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // PostgreSQL notices the dead connection and rolls back whatever it had not committed.
    const { sql } = testDb().db;
    for (let i = 0; i < 100; i++) {
      const [busy] = await sql`SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'number_series' AND l.granted AND l.mode = 'RowExclusiveLock'`;
      if (!busy) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const nextNumber = async (org: TestOrg) =>
    (await testDb().db.sql<{ next_number: number }[]>`SELECT next_number FROM number_series WHERE organization_id = ${org.organizationId}`)[0]!.next_number;
  const documentCount = async (org: TestOrg) =>
    (await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM documents WHERE organization_id = ${org.organizationId}`)[0]!.n;

  it('killed before the reservation commits: the issue rolls back and the number is given back', async () => {
    const { org, victim } = await setUp();
    const key = newIdempotencyKey();
    await issueAndKill(org, victim, key, 'reserve');
    const after = (await call(t.app, 'GET', `/v1/invoices/${victim}`, { key: org.apiKey })).body.data;
    assert.deepEqual([after.status, after.number], ['draft', null]);
    assert.equal(await nextNumber(org), 2, 'the number taken by the dead process was given back');
    assert.equal(await documentCount(org), 1, 'no orphan document');

    const retried = await call(t.app, 'POST', `/v1/invoices/${victim}/issue`, { key: org.apiKey, idempotencyKey: key });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.data.number, 2);
  });

  it('killed while rendering: the invoice stays a locked draft, and the retry with the same key finishes it with the reserved number', async () => {
    const { org, victim } = await setUp();
    const key = newIdempotencyKey();
    await issueAndKill(org, victim, key, 'render');
    const locked = (await call(t.app, 'GET', `/v1/invoices/${victim}`, { key: org.apiKey })).body.data;
    assert.deepEqual([locked.status, locked.number, locked.issueDate], ['draft', null, null], 'never issued without its PDF');
    const edit = await call(t.app, 'PUT', `/v1/invoices/${victim}`, { key: org.apiKey, body: { customerId: locked.customerId, lines } });
    assert.equal(edit.status, 422);
    assert.equal(edit.body.error.code, 'invoice_not_editable');
    const pdf = await call(t.app, 'GET', `/v1/invoices/${victim}/pdf`, { key: org.apiKey });
    assert.equal(pdf.status, 422);
    assert.equal(await nextNumber(org), 3, 'number 2 stays reserved');

    // A retry right away is told that the first request may still be running.
    const early = await call(t.app, 'POST', `/v1/invoices/${victim}/issue`, { key: org.apiKey, idempotencyKey: key });
    assert.equal(early.status, 409);
    assert.equal(early.body.error.code, 'idempotency_in_progress');
    // Another request cannot issue it a second time.
    const other = await call(t.app, 'POST', `/v1/invoices/${victim}/issue`, { key: org.apiKey });
    assert.equal(other.status, 422);
    assert.equal(other.body.error.code, 'invoice_not_editable');
    // A retry with another request under the same key is a conflict.
    const conflict = await call(t.app, 'POST', `/v1/invoices/${victim}/issue`, { key: org.apiKey, idempotencyKey: key, body: { issueDate: '2026-01-05' } });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');

    // Once the reservation is old enough to have lost its request, the retry finishes it.
    await testDb().db.sql`UPDATE invoice_issues SET reserved_at = now() - interval '1 minute' WHERE invoice_id = ${victim}`;
    const retried = await call(t.app, 'POST', `/v1/invoices/${victim}/issue`, { key: org.apiKey, idempotencyKey: key });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.data.number, 2);
    assert.equal(retried.body.data.status, 'issued');
    const again = await call(t.app, 'POST', `/v1/invoices/${victim}/issue`, { key: org.apiKey, idempotencyKey: key });
    assert.equal(again.status, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body.data, retried.body.data);
    assert.equal(await documentCount(org), 2);
    const events = await testDb().db.sql<{ type: string }[]>`SELECT type FROM events WHERE entity_id = ${victim}`;
    assert.deepEqual(events.map((e) => e.type), ['invoice.issued']);

    const next = await call(t.app, 'POST', `/v1/invoices?issue=true`, { key: org.apiKey, body: { customerId: locked.customerId, lines } });
    assert.equal(next.body.data.number, 3, 'the series continues without a gap');
  });

  it('killed while rendering and never retried: the finisher completes it and stores the response for the key', async () => {
    const { org, victim } = await setUp();
    const key = newIdempotencyKey();
    await issueAndKill(org, victim, key, 'render');
    // The reservation is listed in the wake index, where the housekeeping loop finds it once it is overdue.
    const stale = (await dueWakes(testDb().db, org.organizationId, null, 100)).filter((w) => w.service === 'InvoiceIssue').map((w) => w.key);
    assert.ok(stale.includes(victim));
    const deps = { db: testDb().db, keyring: testDb().keyring, pdf: testRenderer(), documents: createPostgresDocumentStore(), mailDomain: 'faktura.invalid' };
    // Two finishers at once (a sweep and a late retry, say): one commits, the other finds the work done.
    const [a, b] = await Promise.all([finishIssue(deps, victim), finishIssue(deps, victim)]);
    assert.equal([a, b].filter((x) => x !== undefined).length, 1);
    const invoice = (await call(t.app, 'GET', `/v1/invoices/${victim}`, { key: org.apiKey })).body.data;
    assert.deepEqual([invoice.status, invoice.number], ['issued', 2]);
    const replay = await call(t.app, 'POST', `/v1/invoices/${victim}/issue`, { key: org.apiKey, idempotencyKey: key });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body.data.number, 2);
    assert.equal(await documentCount(org), 2);
  });
});
