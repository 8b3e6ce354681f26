import { testActivityResources } from '../helpers/activities.ts';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import * as clients from '@restatedev/restate-sdk-clients';
import { purgeIdempotencyKeys } from '../../activities/purge-idempotency.ts';
import { freePort } from '../../deploy/local/ports.ts';
import {
  HOUSEKEEPING,
  IDEMPOTENCY_JOB,
  OVERDUE_AFTER_MS,
  RUN_INTERVAL_MS,
  type Housekeeping,
  type HousekeepingState,
} from '../../workflows/housekeeping.ts';
import {
  createActivities,
  registerDeployment,
  startHousekeeping,
  startWorkflowsEndpoint,
  workflowsSourceHash,
  type WorkflowsEndpoint,
} from '../../workflows/main.ts';
import { createTestOrg, testDb, type TestOrg } from '../helpers/context.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';

const RETENTION_DAYS = 30;

/** Inserts stored responses for `org`, each `ageDays` old. */
async function insertIdempotencyRows(org: TestOrg, rows: Record<string, number>): Promise<void> {
  const { db } = testDb();
  for (const [key, ageDays] of Object.entries(rows)) {
    await db.sql`
      INSERT INTO idempotency_keys (organization_id, key, request_hash, response_status, response_body, created_at)
      VALUES (${org.organizationId}, ${key}, ${Buffer.alloc(32, 1)}, 201, NULL, now() - make_interval(days => ${ageDays}::int))`;
  }
}

async function keysOf(org: TestOrg): Promise<string[]> {
  const { db } = testDb();
  const rows = await db.sql<{ key: string }[]>`
    SELECT key FROM idempotency_keys WHERE organization_id = ${org.organizationId} ORDER BY key`;
  return rows.map((r) => r.key);
}

async function countExpired(): Promise<number> {
  const { db } = testDb();
  const [row] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM idempotency_keys WHERE created_at < now() - make_interval(days => ${RETENTION_DAYS}::int)`;
  return row!.n;
}

describe('Housekeeping: purge of stored idempotent responses', function () {
  this.timeout(30_000);
  let restate: TestRestate;
  let endpoint: WorkflowsEndpoint;
  let ingress: clients.Ingress;
  let org: TestOrg;
  const endpointLogs: string[] = [];

  const object = () => ingress.objectClient<Housekeeping>({ name: HOUSEKEEPING }, IDEMPOTENCY_JOB);
  const status = async (): Promise<HousekeepingState> => object().status();
  const scheduledWakes = () =>
    restate.query<{ id: string }>(
      `SELECT id FROM sys_invocation
       WHERE target_service_name = '${HOUSEKEEPING}' AND target_service_key = '${IDEMPOTENCY_JOB}'
         AND target_handler_name = 'wake' AND status = 'scheduled'`,
    );

  before(async () => {
    restate = await startTestRestate();
    const logStream = new Writable({
      write(chunk, _enc, cb) {
        endpointLogs.push(String(chunk));
        cb();
      },
    });
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(testDb().db, { idempotencyRetentionDays: RETENTION_DAYS, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined }, testActivityResources()),
      host: '127.0.0.1',
      port: await freePort(),
      identityKeys: restate.identityKeys,
      logStream,
    });
    await registerDeployment(restate.adminUrl, endpoint.url);
    ingress = clients.connect({ url: restate.ingressUrl });
    org = await createTestOrg();
  });

  after(async () => {
    await endpoint?.close();
    await restate?.stop();
  });

  it('purges responses older than the retention on start, keeps newer ones, and arms one wake-up a day later', async () => {
    await insertIdempotencyRows(org, { 'old-400-days': 400, 'old-31-days': 31, 'new-29-days': 29, 'new-today': 0 });
    const expired = await countExpired();
    assert.ok(expired >= 2);

    const before = Date.now();
    await startHousekeeping(restate.ingressUrl, undefined, [IDEMPOTENCY_JOB]);
    let s = await status();
    for (let i = 0; i < 400 && s.lastRunAt === null; i++) {
      await new Promise((r) => setTimeout(r, 25));
      s = await status();
    }

    assert.deepEqual(await keysOf(org), ['new-29-days', 'new-today']);
    assert.equal(s.gen, 1);
    assert.equal(s.lastRunCount, expired);
    assert.equal(s.lastError, null);
    assert.ok(s.lastRunAt! >= before - 1000 && s.lastRunAt! <= Date.now());
    assert.equal(s.nextRunAt, s.lastRunAt! + RUN_INTERVAL_MS);
    const wakes = await scheduledWakes();
    assert.deepEqual(wakes.map((w) => w.id), [s.pendingWake]);
  });

  it('does not arm a second wake-up when started again while armed', async () => {
    const armed = await status();
    assert.deepEqual(await object().start(), { ran: false, reason: 'already_armed', nextRunAt: armed.nextRunAt });
    // The entry point's own path too: a one-way send with a fresh idempotency key, awaited to completion.
    const sent = await startHousekeeping(restate.ingressUrl, undefined, [IDEMPOTENCY_JOB]);
    assert.deepEqual(await ingress.result(sent), { ran: false, reason: 'already_armed', nextRunAt: armed.nextRunAt });

    assert.deepEqual(await status(), armed);
    const wakes = await scheduledWakes();
    assert.equal(wakes.length, 1);
    assert.equal(wakes[0]!.id, armed.pendingWake);
  });

  it('ignores a wake-up of an earlier generation', async () => {
    const armed = await status();
    await insertIdempotencyRows(org, { 'old-45-days': 45 });
    assert.deepEqual(await object().wake({ gen: armed.gen - 1 }), { ran: false, reason: 'stale_wake', nextRunAt: armed.nextRunAt });
    assert.deepEqual(await keysOf(org), ['new-29-days', 'new-today', 'old-45-days']);
    assert.deepEqual((await scheduledWakes()).map((w) => w.id), [armed.pendingWake]);
  });

  it('a wake-up of the current generation runs the job and leaves exactly one newer wake-up armed', async () => {
    const armed = await status();
    const result = await object().wake({ gen: armed.gen });
    assert.equal(result.ran, true);
    assert.deepEqual(await keysOf(org), ['new-29-days', 'new-today']);
    const after = await status();
    assert.equal(after.gen, armed.gen + 1);
    assert.equal(after.lastRunCount, 1);
    assert.notEqual(after.pendingWake, armed.pendingWake);
    assert.deepEqual((await scheduledWakes()).map((w) => w.id), [after.pendingWake]);
  });

  it('runNow runs at once and replaces the armed wake-up', async () => {
    const armed = await status();
    await insertIdempotencyRows(org, { 'old-60-days': 60 });
    const result = await object().runNow();
    assert.deepEqual(result, { ran: true, count: 1, nextRunAt: result.nextRunAt });
    const after = await status();
    assert.equal(after.gen, armed.gen + 1);
    assert.deepEqual((await scheduledWakes()).map((w) => w.id), [after.pendingWake]);
    assert.deepEqual(await keysOf(org), ['new-29-days', 'new-today']);
  });

  it('start runs again and re-arms when the armed wake-up is long overdue (it was killed)', async () => {
    const armed = await status();
    const killed = await fetch(`${restate.adminUrl}/invocations/${armed.pendingWake}/kill`, { method: 'PATCH' });
    assert.equal(killed.ok, true);
    assert.deepEqual(await scheduledWakes(), []);
    // As it would look a day and two hours later: the wake-up never came.
    const overdue: HousekeepingState = { ...armed, nextRunAt: Date.now() - OVERDUE_AFTER_MS - 60_000 };
    const edited = await fetch(`${restate.adminUrl}/services/${HOUSEKEEPING}/state`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ object_key: IDEMPOTENCY_JOB, new_state: { s: [...Buffer.from(JSON.stringify(overdue))] } }),
    });
    assert.equal(edited.ok, true, await edited.text());
    let current = await status();
    for (let i = 0; i < 200 && current.nextRunAt !== overdue.nextRunAt; i++) {
      await new Promise((r) => setTimeout(r, 25));
      current = await status();
    }
    assert.equal(current.nextRunAt, overdue.nextRunAt);

    const result = await object().start();
    assert.equal(result.ran, true);
    const after = await status();
    assert.equal(after.gen, armed.gen + 1);
    assert.deepEqual((await scheduledWakes()).map((w) => w.id), [after.pendingWake]);
  });

  it('refuses keys that name no job', async () => {
    await assert.rejects(async () => ingress.objectClient<Housekeeping>({ name: HOUSEKEEPING }, 'no-such-job').start(), (err: Error & { status?: number }) => {
      assert.equal(err.status, 404);
      return true;
    });
  });

  it('logs no errors from the endpoint', () => {
    const errors = endpointLogs.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level >= 50);
    assert.deepEqual(errors, []);
  });
});

describe('purgeIdempotencyKeys', () => {
  it('deletes in batches until a batch comes back short, and returns the total', async () => {
    const { db } = testDb();
    const org = await createTestOrg();
    await insertIdempotencyRows(org, { a: 31, b: 32, c: 33, d: 34, e: 35, keep: 1 });
    const expired = await countExpired();
    assert.equal(await purgeIdempotencyKeys(db.sql, RETENTION_DAYS, 2), expired);
    assert.deepEqual(await keysOf(org), ['keep']);
    assert.equal(await purgeIdempotencyKeys(db.sql, RETENTION_DAYS, 2), 0);
  });

  it('refuses a retention that is not a positive number of days', async () => {
    const { db } = testDb();
    await assert.rejects(purgeIdempotencyKeys(db.sql, 0), /positive number of days/);
  });
});

describe('registering the workflows endpoint with Restate', function () {
  this.timeout(30_000);
  let restate: TestRestate;
  const endpoints: WorkflowsEndpoint[] = [];
  const silent = new Writable({ write: (_chunk, _enc, cb) => cb() });

  const newEndpoint = async () => {
    const ep = await startWorkflowsEndpoint({
      activities: createActivities(testDb().db, { idempotencyRetentionDays: RETENTION_DAYS, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined }, testActivityResources()),
      host: '127.0.0.1',
      port: await freePort(),
      identityKeys: restate.identityKeys,
      logStream: silent,
    });
    endpoints.push(ep);
    return ep;
  };
  const routedTo = async (): Promise<string> =>
    ((await (await fetch(`${restate.adminUrl}/services/${HOUSEKEEPING}`)).json()) as { deployment_id: string }).deployment_id;
  const deployments = async () =>
    ((await (await fetch(`${restate.adminUrl}/deployments`)).json()) as { deployments: { id: string; metadata: Record<string, string> }[] })
      .deployments;

  before(async () => {
    restate = await startTestRestate();
  });

  after(async () => {
    for (const ep of endpoints) await ep.close();
    await restate?.stop();
  });

  it('registers once, and re-registering unchanged code changes nothing', async () => {
    const ep = await newEndpoint();
    const first = await registerDeployment(restate.adminUrl, ep.url, 'hash-1');
    assert.deepEqual(first, { deploymentId: first.deploymentId, forced: false, sourceHash: 'hash-1' });
    assert.deepEqual(await registerDeployment(restate.adminUrl, ep.url, 'hash-1'), first);
    assert.deepEqual(
      (await deployments()).map((d) => [d.id, d.metadata]),
      [[first.deploymentId, { sourceHash: 'hash-1' }]],
    );
    assert.equal(await routedTo(), first.deploymentId);
  });

  it('forces the same URI when the code changed, keeping the deployment and storing the new hash', async () => {
    const ep = endpoints[0]!;
    const [before] = await deployments();
    const changed = await registerDeployment(restate.adminUrl, ep.url, 'hash-2');
    assert.deepEqual(changed, { deploymentId: before!.id, forced: true, sourceHash: 'hash-2' });
    assert.deepEqual(
      (await deployments()).map((d) => [d.id, d.metadata]),
      [[before!.id, { sourceHash: 'hash-2' }]],
    );
  });

  it('forces the same URI when its services route to a deployment registered since', async () => {
    const [mine] = await deployments();
    const other = await registerDeployment(restate.adminUrl, (await newEndpoint()).url, 'hash-2');
    assert.equal(other.forced, false);
    assert.equal(await routedTo(), other.deploymentId);

    const back = await registerDeployment(restate.adminUrl, endpoints[0]!.url, 'hash-2');
    assert.deepEqual(back, { deploymentId: mine!.id, forced: true, sourceHash: 'hash-2' });
    assert.equal(await routedTo(), mine!.id);
  });

  it('hashes the sources of workflows/ and activities/', () => {
    assert.match(workflowsSourceHash(), /^[0-9a-f]{64}$/);
    assert.equal(workflowsSourceHash(), workflowsSourceHash());
  });
});
