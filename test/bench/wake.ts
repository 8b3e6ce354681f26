/**
 * The wake stage (`BENCH_ONLY=wake`): the wake index as the scheduler, with handlers as cheap as a handler gets
 * (wake-worker.ts), on a database, a restate-server and a worker process of its own. Lateness is from a row's due
 * time (in real time) to the moment its handler started. Four phases, in order:
 *
 * 1. **Spread.** `BENCH_WAKE_ROWS` (200 000) rows spread evenly over one day, over 1 000 organisations; the rows that
 *    come due during `BENCH_WAKE_WINDOW` seconds are measured while the rest wait. Targets: p99 ≤ 5 s, max ≤ 30 s.
 * 2. **The floor W.** The engine's bare rate of starting keyed handlers: `BENCH_WAKE_ORGS` (20 000) one-way calls of
 *    the same handler through the ingress, as fast as the engine takes them; W = handlers started per second.
 * 3. **Same minute.** One row for each of `BENCH_WAKE_ORGS` live organisations, all due at the same instant. Target:
 *    the last starts within 5 s of ORGS / W after that instant.
 * 4. **Noisy neighbour.** One organisation catching up `BENCH_WAKE_NOISY` (20 000) steps due at once, beside 1 000
 *    organisations with one row each due over the next minute; the others' lateness is reported beside it (target
 *    as in 1), and how far the catch-up got.
 *
 * In every phase no row may start before its time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../deploy/local/ports.ts';
import { startRestateServer } from '../../deploy/local/restate-server.ts';
import { WAKE_SHARDS } from '../../services/clock/wake-index.ts';
import { createSql, type Sql } from '../../services/shared/db.ts';
import { forkBenchWorker } from './worker.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

export interface WakeSettings {
  rows: number;
  windowSec: number;
  orgs: number;
  noisy: number;
  poolMax: number;
  log: (msg: string) => void;
}

interface Lateness {
  due: number;
  started: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The earliest start relative to its due time; negative would be a row started early. */
  minMs: number;
}

export interface WakeFigures {
  spread: Lateness & { waiting: number; windowSec: number; met: boolean };
  floor: { calls: number; seconds: number; perSecond: number };
  sameMinute: { orgs: number; lastStartSec: number; floorSec: number; started: number; early: number; met: boolean };
  noisy: { steps: number; stepsDone: number; windowSec: number; others: Lateness; met: boolean };
}

async function lateness(sql: Sql, prefix: string, dueBefore: Date, dueAfter = new Date(0)): Promise<Lateness> {
  const [r] = await sql<{ due: number; started: number; p50: number | null; p99: number | null; max: number | null; min: number | null }[]>`
    WITH d AS (
      SELECT w.key, wake_real_due(w.organization_id, w.due_at - interval '365 days') AS due_at FROM wake_index w
      WHERE w.service = 'WakeProbe' AND w.key LIKE ${`${prefix}%`} AND w.due_at > now() + interval '300 days'
      UNION ALL
      SELECT w.key, wake_real_due(w.organization_id, w.due_at) FROM wake_index w
      WHERE w.service = 'WakeProbe' AND w.key LIKE ${`${prefix}%`} AND w.due_at <= now() + interval '300 days'
    ), measured AS (
      SELECT d.key, extract(epoch FROM (s.started_at - s.real_due_at)) * 1000 AS late_ms
      FROM d LEFT JOIN bench_wake_starts s ON s.key = d.key
      WHERE d.due_at <= ${dueBefore} AND d.due_at > ${dueAfter}
    )
    SELECT count(*)::int AS due, count(late_ms)::int AS started,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY late_ms) AS p50,
           percentile_cont(0.99) WITHIN GROUP (ORDER BY late_ms) AS p99,
           max(late_ms) AS max, min(late_ms) AS min
    FROM measured`;
  const round = (n: number | null) => Math.round((n ?? 0) * 10) / 10;
  return { due: r!.due, started: r!.started, p50Ms: round(r!.p50), p99Ms: round(r!.p99), maxMs: round(r!.max), minMs: round(r!.min) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchWake(url: string, s: WakeSettings): Promise<WakeFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'faktura-bench-wake-'));
  const cleanups: (() => Promise<void>)[] = [async () => rmSync(dir, { recursive: true, force: true })];
  try {
    const ports = { ingress: await freePort(), admin: await freePort(), fabric: await freePort() };
    const restate = await startRestateServer({ baseDir: join(dir, 'restate'), ports, logFile: join(dir, 'restate.log') });
    cleanups.push(() => restate.stop());
    const sql = createSql(url, { max: 4 });
    cleanups.push(() => sql.end({ timeout: 5 }));
    await sql`CREATE TABLE bench_wake_starts (key text PRIMARY KEY, real_due_at timestamptz NOT NULL, started_at timestamptz NOT NULL)`;
    // Organisations: ORGS live ones (random v4 ids spread over the shards) and the noisy one.
    await sql`INSERT INTO organizations (id, name) SELECT gen_random_uuid(), 'Wake ' || g FROM generate_series(1, ${s.orgs}) g`;
    const orgIds = (await sql<{ id: string }[]>`SELECT id FROM organizations ORDER BY id`).map((r) => r.id);
    const [noisyOrg] = await sql<{ id: string }[]>`INSERT INTO organizations (id, name) VALUES (gen_random_uuid(), 'Noisy') RETURNING id`;

    const worker = await forkBenchWorker(
      join(HERE, 'wake-worker.ts'),
      {
        cwd: resolve(HERE, '../..'),
        env: { ...process.env, DATABASE_URL: url, DB_POOL_MAX: String(s.poolMax), RESTATE_INGRESS_URL: restate.ingressUrl, RESTATE_ADMIN_URL: restate.adminUrl },
      },
      'the wake worker',
    );
    cleanups.push(() => worker.stop());
    const send = async (path: string, body: unknown): Promise<void> => {
      const res = await fetch(`${restate.ingressUrl}/${path}/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status !== 202 && res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    };
    // As every start-up does: each shard's scheduler arms its timer.
    const nudgeAll = () => Promise.all(Array.from({ length: WAKE_SHARDS }, (_, shard) => send(`WakeScheduler/${shard}/nudge`, { atMs: null })));
    await nudgeAll();

    // 1. Spread: ROWS over one day, the first due a minute from now (listing them takes a while); only rows that come
    // due after the listing committed are measured.
    s.log(`wake: ${s.rows} rows over a day, ${s.windowSec} s measured`);
    const spreadStart = Date.now() + 60_000;
    const stepMs = 86_400_000 / s.rows;
    await sql`
      SELECT wake_schedule('WakeProbe', 'wake', 'a-' || g, (${orgIds.slice(0, 1000)}::uuid[])[1 + g % 1000],
                           ${new Date(spreadStart)}::timestamptz + make_interval(secs => g * ${stepMs / 1000}::float8))
      FROM generate_series(0, ${s.rows - 1}) g`;
    const listed = new Date(Date.now() + 1000);
    await sleep(Math.max(0, spreadStart - Date.now()) + s.windowSec * 1000);
    const spreadEnd = new Date(Date.now() - 5_000);
    const spread = await lateness(sql, 'a-', spreadEnd, listed);
    const [waiting] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM wake_index WHERE service = 'WakeProbe' AND key LIKE 'a-%' AND due_at > now() AND due_at < now() + interval '300 days'`;
    await sql`DELETE FROM wake_index WHERE service = 'WakeProbe' AND key LIKE 'a-%'`;

    // 2. The floor: ORGS calls of the same handler, for rows listed for tomorrow, sent straight through the ingress as
    // fast as the engine takes them (no scheduler, no claim): the rate at which the engine starts keyed handlers.
    s.log(`wake: the engine's bare rate, ${s.orgs} keyed handlers`);
    await sql`SELECT wake_schedule('WakeProbe', 'wake', 'b-' || o.n, o.id, now() + interval '1 day') FROM unnest(${orgIds}::uuid[]) WITH ORDINALITY AS o (id, n)`;
    const floorStart = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < s.orgs) {
          const i = ++next;
          await send(`WakeProbe/b-${i}/wake`, {});
        }
      }),
    );
    for (let i = 0; i < 6000; i++) {
      const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM bench_wake_starts WHERE key LIKE 'b-%'`;
      if (n!.n >= s.orgs) break;
      await sleep(100);
    }
    const [bare] = await sql<{ n: number; last: Date }[]>`SELECT count(*)::int AS n, max(started_at) AS last FROM bench_wake_starts WHERE key LIKE 'b-%'`;
    await sql`DELETE FROM wake_index WHERE service = 'WakeProbe' AND key LIKE 'b-%'`;
    const floorSec = (bare!.last.getTime() - floorStart) / 1000;
    const perSecond = bare!.n / floorSec;

    // 3. Same minute: one row per organisation, listed for tomorrow, then all moved to one instant 10 s from now in one
    // statement that tells the schedulers' listener, as wake_schedule does for a row earlier than a shard's timer.
    s.log(`wake: ${s.orgs} organisations due at the same instant`);
    await sql`SELECT wake_schedule('WakeProbe', 'wake', 'c-' || o.n, o.id, now() + interval '1 day') FROM unnest(${orgIds}::uuid[]) WITH ORDINALITY AS o (id, n)`;
    const at = new Date(Date.now() + 10_000);
    await sql.begin(async (tx) => {
      await tx`UPDATE wake_index SET due_at = ${at} WHERE service = 'WakeProbe' AND key LIKE 'c-%'`;
      await tx`SELECT pg_notify('wake_earlier', s::text) FROM generate_series(0, ${WAKE_SHARDS - 1}) s`;
    });
    const expectSec = s.orgs / perSecond;
    await sleep(Math.max(0, at.getTime() - Date.now()));
    for (let i = 0; i < (expectSec + 60) * 10; i++) {
      const [n] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM bench_wake_starts WHERE key LIKE 'c-%'`;
      if (n!.n >= s.orgs) break;
      await sleep(100);
    }
    const [same] = await sql<{ n: number; last: Date | null; early: number }[]>`
      SELECT count(*)::int AS n, max(started_at) AS last, count(*) FILTER (WHERE started_at < real_due_at)::int AS early
      FROM bench_wake_starts WHERE key LIKE 'c-%'`;
    const lastStartSec = same!.last ? (same!.last.getTime() - at.getTime()) / 1000 : Infinity;

    // 4. Noisy neighbour: NOISY steps of one organisation due now, and 1 000 others' rows over the next minute.
    s.log(`wake: one organisation catching up ${s.noisy} steps beside 1 000 others`);
    const noisyAt = new Date();
    await sql`SELECT wake_schedule('WakeProbe', 'wake', 'n-' || g, ${noisyOrg!.id}::uuid, ${noisyAt}) FROM generate_series(1, ${s.noisy}) g`;
    await nudgeAll();
    await sql`
      SELECT wake_schedule('WakeProbe', 'wake', 'o-' || g, (${orgIds.slice(1000, 2000)}::uuid[])[g],
                           ${new Date(Date.now() + 2_000)}::timestamptz + make_interval(secs => g * 0.06))
      FROM generate_series(1, ${Math.min(1000, orgIds.length - 1000)}) g`;
    const noisyWindowSec = 80;
    await sleep(noisyWindowSec * 1000);
    const others = await lateness(sql, 'o-', new Date(Date.now() - 5_000));
    const [done] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM bench_wake_starts WHERE key LIKE 'n-%'`;

    return {
      spread: { ...spread, waiting: waiting!.n, windowSec: s.windowSec, met: spread.started === spread.due && spread.minMs >= 0 && spread.p99Ms <= 5000 && spread.maxMs <= 30_000 },
      floor: { calls: bare!.n, seconds: Math.round(floorSec * 10) / 10, perSecond: Math.round(perSecond) },
      sameMinute: {
        orgs: s.orgs,
        lastStartSec: Math.round(lastStartSec * 10) / 10,
        floorSec: Math.round(expectSec * 10) / 10,
        started: same!.n,
        early: same!.early,
        met: same!.n === s.orgs && same!.early === 0 && lastStartSec <= expectSec + 5,
      },
      noisy: {
        steps: s.noisy,
        stepsDone: done!.n,
        windowSec: noisyWindowSec,
        others,
        met: others.started === others.due && others.minMs >= 0 && others.p99Ms <= 5000 && others.maxMs <= 30_000,
      },
    };
  } finally {
    while (cleanups.length) await cleanups.pop()!().catch(() => {});
  }
}

const ok = (met: boolean) => (met ? 'MET' : 'MISSED');

export function formatWake(w: WakeFigures): string {
  const l = (x: Lateness) => `${x.started}/${x.due} started, lateness p50 ${x.p50Ms} ms, p99 ${x.p99Ms} ms, max ${x.maxMs} ms, earliest ${x.minMs} ms`;
  return [
    'Wake index as the scheduler (cheap handlers)',
    `  spread: ${w.spread.windowSec} s of a day's ${w.spread.waiting + w.spread.due} rows (${w.spread.waiting} still waiting): ${l(w.spread)}  [p99 ≤ 5 s, max ≤ 30 s: ${ok(w.spread.met)}]`,
    `  floor W: ${w.floor.calls} keyed handlers started through the ingress in ${w.floor.seconds} s = ${w.floor.perSecond}/s`,
    `  same instant: ${w.sameMinute.started}/${w.sameMinute.orgs} organisations, the last started ${w.sameMinute.lastStartSec} s after its time ` +
      `(floor ${w.sameMinute.orgs}/W = ${w.sameMinute.floorSec} s), ${w.sameMinute.early} early  [≤ floor + 5 s, none early: ${ok(w.sameMinute.met)}]`,
    `  noisy neighbour: ${w.noisy.stepsDone}/${w.noisy.steps} catch-up steps done in ${w.noisy.windowSec} s; the others: ${l(w.noisy.others)}  [p99 ≤ 5 s, max ≤ 30 s: ${ok(w.noisy.met)}]`,
  ].join('\n');
}
