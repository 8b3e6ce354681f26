import assert from 'node:assert/strict';
import postgres from 'postgres';
import { migrate } from '../../services/db/migrate.ts';
import { readWakeQueue, WAKE_SERVICES } from '../../services/observability/metrics.ts';
import { Db, type Sql } from '../../services/shared/db.ts';
import { planNodes, type PlanNode } from '../helpers/query-plans.ts';

/**
 * The workflows process computes `faktura_wake_lag_seconds` and `faktura_parked_work` at every scrape, so their read
 * must cost the same whatever the wake index holds: one index probe per service for the oldest due row, and the
 * parked rows alone. On a database of its own (clean statistics): 100 000 rows due over the next two months, 5 000
 * rows due now (Dunning, the oldest 2 h ago; WebhookDelivery, the oldest 10 min ago, one of them claimed), and 3
 * parked rows. The statements `readWakeQueue` sends are recorded and explained with their parameters.
 */
describe('wake metrics: lag and parked work from index probes, whatever waits', function () {
  this.timeout(120_000);
  const ORG = '00000000-0000-7000-8000-0000000000c1';
  const name = `faktura_wakemetrics_${process.pid}_${Date.now().toString(36)}`;
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
    await sql`INSERT INTO organizations (id, name, sandbox) VALUES (${ORG}, 'C', false)`;
    await sql.unsafe(`
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT (ARRAY['WebhookDelivery', 'Dunning', 'SubscriptionSchedule', 'Case'])[1 + g % 4], 'wake', 'later-' || g, '${ORG}',
             now() + make_interval(secs => g * 51) FROM generate_series(1, 100000) g;
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT 'Dunning', 'wake', 'due-' || g, '${ORG}', now() - interval '2 hours' + make_interval(secs => g) FROM generate_series(1, 2500) g;
      INSERT INTO wake_index (service, handler, key, organization_id, due_at)
      SELECT 'WebhookDelivery', 'wake', 'due-' || g, '${ORG}', now() - interval '10 minutes' + make_interval(secs => g % 60) FROM generate_series(1, 2500) g;
      UPDATE wake_index SET claimed_at = now(), claim_token = 1 WHERE service = 'WebhookDelivery' AND key = 'due-60';
      INSERT INTO wake_index (service, handler, key, organization_id, due_at, parked_at, last_error)
      VALUES ('InvoiceMail', 'deliver', 'p1', '${ORG}', now() - interval '3 days', now(), 'x'),
             ('InvoiceMail', 'deliver', 'p2', '${ORG}', now() - interval '3 days', now(), 'x'),
             ('Case', 'wake', 'p3', '${ORG}', now() - interval '3 days', now(), 'x');
      ANALYZE wake_index;`);
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  });

  async function explain(match: RegExp): Promise<PlanNode[]> {
    const last = seen.findLast((s) => match.test(s.query));
    assert.ok(last, 'no statement matched');
    const [row] = await sql.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${last.query}`, last.params as never[]);
    return planNodes((row as unknown as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
  }
  const wakeScans = (plan: PlanNode[]) => plan.filter((n) => n['Relation Name'] === 'wake_index');
  const rowsRead = (n: PlanNode) => n['Actual Rows'] * n['Actual Loops'];

  it('reports the oldest due row per service (claimed or not, parked ones aside) and the parked rows exactly', async () => {
    const f = await readWakeQueue(db);
    assert.deepEqual([...f.lagSeconds.keys()].sort(), [...WAKE_SERVICES].sort());
    const dunning = f.lagSeconds.get('Dunning')!;
    assert.ok(dunning >= 2 * 3600 - 1 && dunning < 2 * 3600 + 60, `Dunning lag ${dunning}`);
    const webhooks = f.lagSeconds.get('WebhookDelivery')!;
    assert.ok(webhooks >= 600 && webhooks < 600 + 60, `WebhookDelivery lag ${webhooks}`);
    // Nothing due (later rows only), or only parked rows: no lag.
    assert.equal(f.lagSeconds.get('SubscriptionSchedule'), 0);
    assert.equal(f.lagSeconds.get('InvoiceMail'), 0);
    assert.deepEqual(Object.fromEntries(f.parked), { ...Object.fromEntries(WAKE_SERVICES.map((s) => [s, 0])), InvoiceMail: 2, Case: 1 });
  });

  it('the lag reads one index entry per service that has rows, by a skip scan of wake_index_service_due', async () => {
    seen.length = 0;
    await readWakeQueue(db);
    const scans = wakeScans(await explain(/WITH RECURSIVE oldest/));
    assert.ok(scans.length > 0);
    for (const s of scans) {
      assert.match(s['Node Type'], /^Index (Only )?Scan$/, JSON.stringify(s));
      assert.equal(s['Index Name'], 'wake_index_service_due');
    }
    // One probe per service with rows, and one that finds no further service (five of 105 000 rows); each probe
    // stops at its service's oldest unparked row, one entry.
    assert.equal(scans.reduce((n, s) => n + s['Actual Loops'], 0), 4 + 1);
    for (const s of scans) assert.ok(s['Actual Rows'] <= 1, JSON.stringify(s));
  });

  it('the parked count reads the 3 parked rows through wake_index_parked and nothing else', async () => {
    seen.length = 0;
    await readWakeQueue(db);
    const scans = wakeScans(await explain(/WHERE parked_at IS NOT NULL GROUP BY service/));
    assert.equal(scans.length, 1);
    assert.match(scans[0]!['Node Type'], /^(Index|Bitmap Heap) Scan$/);
    if (scans[0]!['Node Type'] === 'Index Scan') assert.equal(scans[0]!['Index Name'], 'wake_index_parked');
    assert.equal(rowsRead(scans[0]!), 3);
  });
});
