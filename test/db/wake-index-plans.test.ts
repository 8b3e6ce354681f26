import assert from 'node:assert/strict';
import postgres from 'postgres';
import { migrate } from '../../services/db/migrate.ts';
import { dueWakes, shardsWithLostWork, wakeShardOf } from '../../services/clock/wake-index.ts';
import { Db, type Sql } from '../../services/shared/db.ts';
import { planNodes, type PlanNode } from '../helpers/query-plans.ts';



/**
 * Time-driven work scales with what is due, not with what exists: waking an organisation reads its due rows of the
 * wake index and nothing else. On a database of its own (clean statistics): a sandbox organisation with 100 000
 * rows due over the next 59 days (one every 51 s) and 20 due now, and another organisation with 10 000 rows due now. The statements
 * the wake index sends are recorded and explained with their parameters.
 */
describe('wake index plans: 100 000 rows not yet due are not read', function () {
  this.timeout(120_000);
  const A = '00000000-0000-7000-8000-0000000000a1';
  const B = '00000000-0000-7000-8000-0000000000b1';
  const name = `faktura_wakeplans_${process.pid}_${Date.now().toString(36)}`;
  let admin: postgres.Sql;
  let sql: Sql;
  let db: Db;
  const seen: { query: string; params: unknown[] }[] = [];

  before(async () => {
    admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    sql = postgres(url.toString(), { max: 1, onnotice: () => {}, debug: (_conn, query, params) => seen.push({ query, params }) });
    db = new Db(sql, 1);
    await migrate(sql);
    await sql`INSERT INTO organizations (id, name, sandbox) VALUES (${A}, 'A', true), (${B}, 'B', false)`;
    await sql`INSERT INTO test_clocks (organization_id, offset_ms) VALUES (${A}, 0)`;
    await sql.unsafe(`
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT 'WebhookDelivery', 'wake', 'later-' || g, '${A}', now() + make_interval(secs => g * 51) FROM generate_series(1, 100000) g;
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT 'WebhookDelivery', 'wake', 'due-' || g, '${A}', now() - make_interval(mins => 5 + g) FROM generate_series(1, 20) g;
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT 'WebhookDelivery', 'wake', 'other-' || g, '${B}', now() - make_interval(secs => g % 50) FROM generate_series(1, 10000) g;
      ANALYZE wake_index;`);
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  });

  async function explainLast(match: RegExp): Promise<PlanNode[]> {
    const last = seen.findLast((s) => match.test(s.query));
    assert.ok(last, 'no statement matched');
    const [row] = await sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${last.query}`, last.params as never[]);
    return planNodes((row as unknown as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
  }
  const wakeScans = (plan: PlanNode[]) => plan.filter((n) => n['Relation Name'] === 'wake_index');

  it("waking one organisation reads its 20 due rows through one index range, none of its 100 000 later ones and none of another organisation's", async () => {
    seen.length = 0;
    const due = await dueWakes(db, A, null, 500);
    assert.equal(due.length, 20);
    assert.ok(due.every((w) => w.key.startsWith('due-')));
    const plan = await explainLast(/FROM wake_index/);
    const scans = wakeScans(plan);
    assert.equal(scans.length, 1, JSON.stringify(plan.map((n) => n['Node Type'])));
    assert.equal(scans[0]!['Index Name'], 'wake_index_org_due');
    assert.equal(scans[0]!['Actual Rows'], 20);
    assert.ok(plan.every((n) => (n['Rows Removed by Filter'] ?? 0) === 0), JSON.stringify(plan));
  });

  for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
    it(`reads no other organisation's due rows with a ${mode === 'force_custom_plan' ? 'custom' : 'generic'} plan either`, async () => {
      // B's 10 000 rows are due before A's business now: a plan on the due_at index alone would read them all.
      await sql.unsafe(`SET plan_cache_mode = ${mode}`);
      try {
        seen.length = 0;
        assert.equal((await dueWakes(db, A, null, 500)).length, 20);
        const last = seen.findLast((q) => /FROM wake_index/.test(q.query))!;
        await sql.unsafe(`PREPARE due_page AS ${last.query.replace(/\$(\d+)/g, (_m, n: string) => `$${n}`)}`);
        const [row] = await sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE due_page (${last.params.map((v) => `'${String(v)}'`).join(', ')})`);
        const plan = planNodes((row as unknown as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
        const scans = wakeScans(plan);
        assert.deepEqual(scans.map((n) => n['Index Name']), ['wake_index_org_due'], JSON.stringify(plan.map((n) => [n['Node Type'], n['Index Name']])));
        assert.equal(scans[0]!['Actual Rows'], 20);
      } finally {
        await sql.unsafe('DEALLOCATE ALL');
        await sql.unsafe('RESET plan_cache_mode');
      }
    });
  }

  it('pages through the due rows in (due_at, service, key) order without reading a page twice', async () => {
    const first = await dueWakes(db, A, null, 8);
    seen.length = 0;
    const second = await dueWakes(db, A, first.at(-1)!, 8);
    const third = await dueWakes(db, A, second.at(-1)!, 8);
    assert.equal(new Set([...first, ...second, ...third].map((w) => w.key)).size, 20);
    assert.equal(third.length, 4);
    const plan = await explainLast(/FROM wake_index/);
    assert.ok(wakeScans(plan).every((n) => n['Actual Rows'] <= 4), JSON.stringify(plan));
  });

  it('a test clock advance makes the later rows due by business time, and only then are they read', async () => {
    await sql`UPDATE test_clocks SET offset_ms = ${2 * 86_400_000} WHERE organization_id = ${A}`;
    try {
      const due = await dueWakes(db, A, null, 5000);
      // 20 overdue, plus the rows due within two days (one every 51 s): 172 800 / 51.
      assert.equal(due.length, 20 + Math.floor(172_800 / 51));
    } finally {
      await sql`UPDATE test_clocks SET offset_ms = 0 WHERE organization_id = ${A}`;
    }
  });

  it('the housekeeping backstop finds the shards with lost work without reading rows that are not overdue', async () => {
    seen.length = 0;
    // A grace of five minutes: A's rows are overdue by six or more, B's came due at most 50 s before the set-up, so
    // they stay within it however long a loaded machine takes to get here (with one minute, B's oldest crossed it).
    const shards = await shardsWithLostWork(db, 5 * 60_000);
    assert.deepEqual(shards, [wakeShardOf(A)]);
    const plan = await explainLast(/FROM wake_index/);
    const read = wakeScans(plan).reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0);
    // A's 20 overdue rows (the real-time range), B's none: B's rows came due less than the grace ago.
    assert.ok(read <= 20, JSON.stringify(plan.map((n) => [n['Node Type'], n['Index Name'], n['Actual Rows']])));
  });
});
