import assert from 'node:assert/strict';
import postgres from 'postgres';
import { migrate } from '../../services/db/migrate.ts';
import { armShard, claimDueWakes, claimWake, releaseNudge, releaseWake, RELEASE_COALESCE_MS, wakeShardOf } from '../../services/clock/wake-index.ts';
import { Db, type Sql } from '../../services/shared/db.ts';
import { planNodes, type PlanNode } from '../helpers/query-plans.ts';

/** Rows the plan read from wake_index, over every loop. */
const rowsRead = (plan: PlanNode): number =>
  planNodes(plan)
    .filter((n) => n['Relation Name'] === 'wake_index' || (n['Index Name'] ?? '').startsWith('wake_index'))
    .reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);

/**
 * The wake index as the scheduler (migration 029): claims (one invocation in flight or queued per row, whatever pokes
 * it), fair admission across organisations, and a scheduler whose cost with nothing due does not grow with what
 * waits. On a database of its own, so that the statistics and the plans are this test's.
 */
describe('wake scheduler: claims, fair admission, and cost with 1 000 000 rows waiting', function () {
  this.timeout(180_000);
  // Three organisations in shard 1 (ids ending in 1 or 9), and a sandbox one in shard 2 whose clock runs two days ahead.
  const NOISY = '00000000-0000-7000-8000-0000000000a1';
  const QUIET = '00000000-0000-7000-8000-0000000000b9';
  const SANDBOX = '00000000-0000-7000-8000-0000000000c2';
  const WAITING = '00000000-0000-7000-8000-0000000000d1';
  const name = `faktura_wakesched_${process.pid}_${Date.now().toString(36)}`;
  let admin: postgres.Sql;
  let sql: Sql;
  let db: Db;

  before(async () => {
    admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
    db = new Db(sql, 2);
    await migrate(sql);
    await sql`INSERT INTO organizations (id, name, sandbox) VALUES (${NOISY}, 'N', false), (${QUIET}, 'Q', false), (${SANDBOX}, 'S', true), (${WAITING}, 'W', false)`;
    await sql`INSERT INTO test_clocks (organization_id, offset_ms) VALUES (${SANDBOX}, ${2 * 86_400_000})`;
    // A million rows due over the coming year, none due now.
    await sql.unsafe(`
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT 'Dunning', 'wake', 'later-' || g, '${WAITING}', now() + interval '1 hour' + make_interval(secs => g * 31) FROM generate_series(1, 1000000) g;
      ANALYZE wake_index;`);
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  });

  const explain = async (statement: string): Promise<PlanNode> => {
    const [row] = await sql.unsafe<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`);
    return row!['QUERY PLAN'][0].Plan;
  };

  it('the shard of an organisation is the same in TypeScript and SQL', async () => {
    const ids = [NOISY, QUIET, SANDBOX, WAITING, ...Array.from({ length: 32 }, () => crypto.randomUUID())];
    const rows = await sql<{ id: string; shard: number }[]>`SELECT id, wake_shard(id::uuid) AS shard FROM unnest(${ids}::text[]) id`;
    for (const r of rows) assert.equal(wakeShardOf(r.id), r.shard, r.id);
    assert.deepEqual([NOISY, QUIET, SANDBOX, WAITING].map(wakeShardOf), [1, 1, 2, 1]);
  });

  it('with nothing due, a tick reads no row, and finding the next one reads one, whatever waits', async () => {
    // What the scheduler's own statements read, counted by PostgreSQL for this transaction alone.
    await sql.begin(async (tx) => {
      await tx`SELECT * FROM wake_claim_due(1::smallint, 500, 8)`;
      await tx`SELECT wake_next_due(1::smallint)`;
      const [read] = await tx<{ seq_scan: string; idx_tup_fetch: string }[]>`
        SELECT seq_scan, idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relname = 'wake_index'`;
      assert.deepEqual({ seqScans: Number(read!.seq_scan), rowsFetched: Number(read!.idx_tup_fetch) }, { seqScans: 0, rowsFetched: 1 });
    });
    const due = await explain(`
      SELECT w.service, w.key FROM wake_index w
      WHERE w.shard = 1 AND w.parked_at IS NULL AND w.claimed_at IS NULL AND w.due_at <= now()`);
    assert.equal(rowsRead(due), 0);
    const next = await explain(`
      SELECT w.due_at FROM wake_index w
      WHERE w.shard = 1 AND w.parked_at IS NULL AND w.claimed_at IS NULL ORDER BY w.due_at LIMIT 1`);
    assert.equal(rowsRead(next), 1);
    assert.deepEqual(await claimDueWakes(db, 1, 500), []);
    const earliest = await armShard(db, 1, new Date(Date.now() + 3_600_000 * 24));
    assert.ok(earliest !== null && earliest > Date.now() + 3_500_000, 'the next row is an hour out');
    const [shard] = await sql<{ armed_at: Date }[]>`SELECT armed_at FROM wake_shards WHERE shard = 1`;
    assert.equal(shard!.armed_at.getTime(), earliest);
  });

  it('a row has at most one claim: a second poke claims nothing until the first is released', async () => {
    await sql`SELECT wake_schedule('Case', 'wake', 'one', ${QUIET}::uuid, now() - interval '1 second')`;
    const first = await claimWake(sql, { service: 'Case', key: 'one' });
    assert.ok(first);
    assert.equal(await claimWake(sql, { service: 'Case', key: 'one' }), null);
    assert.deepEqual(await claimDueWakes(db, 1, 500), [], 'the scheduler does not claim it either');
    // A release naming another claim releases nothing.
    assert.equal(await releaseWake(db, { service: 'Case', key: 'one' }, first.token + 1000), null);
    assert.equal(await claimWake(sql, { service: 'Case', key: 'one' }), null);
    const released = await releaseWake(db, { service: 'Case', key: 'one' }, first.token);
    assert.deepEqual(released && released.shard, 1);
    const second = await claimWake(sql, { service: 'Case', key: 'one' });
    assert.ok(second && second.token > first.token);
    await sql`SELECT wake_clear('Case', 'one')`;
  });

  it('a row listed again gets a token no earlier claim of it had, so a late release of that claim changes nothing', async () => {
    await sql`SELECT wake_schedule('InvoiceMail', 'deliver', 'again', ${QUIET}::uuid, now())`;
    const old = (await claimWake(sql, { service: 'InvoiceMail', key: 'again' }))!;
    await sql`SELECT wake_clear('InvoiceMail', 'again')`;
    await sql`SELECT wake_schedule('InvoiceMail', 'deliver', 'again', ${QUIET}::uuid, now())`;
    const fresh = (await claimWake(sql, { service: 'InvoiceMail', key: 'again' }))!;
    assert.notEqual(fresh.token, old.token);
    assert.equal(await releaseWake(db, { service: 'InvoiceMail', key: 'again' }, old.token), null);
    const [row] = await sql<{ claimed: boolean }[]>`SELECT claimed_at IS NOT NULL AS claimed FROM wake_index WHERE service = 'InvoiceMail' AND key = 'again'`;
    assert.equal(row!.claimed, true);
    await sql`SELECT wake_clear('InvoiceMail', 'again')`;
  });

  it("admits due work fairly: one organisation's backlog holds at most 8 slots, and every other organisation's rows go first round", async () => {
    await sql`
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT 'Dunning', 'wake', 'noisy-' || g, ${NOISY}::uuid, now() - interval '1 hour' + make_interval(secs => g) FROM generate_series(1, 200) g`;
    await sql`
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT 'Dunning', 'wake', 'quiet-' || g, ${QUIET}::uuid, now() - make_interval(secs => g) FROM generate_series(1, 3) g`;
    const first = await claimDueWakes(db, 1, 6, 8);
    // Round the organisations, each one's oldest first: the noisy one's backlog is older, yet the quiet one's rows
    // are in the first page.
    assert.deepEqual(first.map((c) => c.key).sort(), ['noisy-1', 'noisy-2', 'noisy-3', 'quiet-1', 'quiet-2', 'quiet-3'].sort());
    const second = await claimDueWakes(db, 1, 500, 8);
    assert.deepEqual(second.map((c) => c.key), ['noisy-4', 'noisy-5', 'noisy-6', 'noisy-7', 'noisy-8']);
    assert.deepEqual(await claimDueWakes(db, 1, 500, 8), [], 'the noisy organisation has 8 in flight');
    // Its handler took the step and moved the row to its next day; the release frees the slot and says the
    // organisation has due rows waiting for it.
    const done = first.find((c) => c.key === 'noisy-1')!;
    await sql`SELECT wake_schedule('Dunning', 'wake', 'noisy-1', ${NOISY}::uuid, now() + interval '1 day')`;
    const released = await releaseWake(db, done, done.token);
    assert.ok(released && released.nudgeAtMs !== null && released.nudgeAtMs >= Date.now());
    assert.deepEqual((await claimDueWakes(db, 1, 500, 8)).map((c) => c.key), ['noisy-9']);
    await sql`DELETE FROM wake_index WHERE organization_id IN (${NOISY}, ${QUIET})`;
  });

  it("a sandbox organisation's rows are due by its business clock, not by real time", async () => {
    await sql`
      INSERT INTO wake_index (service, handler, key, organization_id, due_at) VALUES
        ('Dunning', 'wake', 'sandbox-due', ${SANDBOX}, now() + interval '1 day'),
        ('Dunning', 'wake', 'sandbox-later', ${SANDBOX}, now() + interval '3 days')`;
    assert.deepEqual((await claimDueWakes(db, 2, 500, 8)).map((c) => c.key), ['sandbox-due']);
    // The later one is a day out in business time: the shard's timer goes there in real time.
    const earliest = await armShard(db, 2, new Date(Date.now() + 86_400_000 * 7));
    assert.ok(earliest !== null && Math.abs(earliest - (Date.now() + 86_400_000)) < 60_000, String(earliest));
    await sql`DELETE FROM wake_index WHERE organization_id = ${SANDBOX}`;
  });

  it('when a release or a poke nudges the scheduler (a table)', () => {
    const now = 1_000_000;
    const soon = now + RELEASE_COALESCE_MS;
    const cases: [string, Parameters<typeof releaseNudge>[1], number | null][] = [
      ['gone from the index or parked, nothing waiting', { dueAtMs: null, armedAtMs: null, backlog: false }, null],
      ['due again (rescheduled while in flight)', { dueAtMs: now - 5, armedAtMs: now + 60_000, backlog: false }, soon],
      ['later than the armed timer', { dueAtMs: now + 90_000, armedAtMs: now + 60_000, backlog: false }, null],
      ['earlier than the armed timer', { dueAtMs: now + 30_000, armedAtMs: now + 60_000, backlog: false }, now + 30_000],
      ['no timer armed', { dueAtMs: now + 30_000, armedAtMs: null, backlog: false }, now + 30_000],
      ['the organisation has due rows waiting for a slot', { dueAtMs: now + 90_000, armedAtMs: now + 60_000, backlog: true }, soon],
    ];
    for (const [what, row, expected] of cases) assert.equal(releaseNudge(now, row), expected, what);
  });
});
