/**
 * The subscriptions benchmark: how fast the SubscriptionSchedule issues the periods of many subscriptions that come
 * due on one business day, and what a test clock advance costs when none is due.
 *
 * Like the dunning stage, on a database of its own (run.ts hands it a migrated sibling), a restate-server of its own
 * (temp directory), the workflows process as production runs it (`runWorkflows` in a forked child: the BusinessClock,
 * the SubscriptionSchedule and InvoiceIssue objects, the housekeeping loop, its own Chromium with one page), and in
 * this process, standing in for the API, the real app (`buildApp`) for `POST /v1/test-clock/advance`, whose
 * after-commit wake is the BusinessClock's `wakeDue` through the ingress, request-response so the bench knows when the
 * organisation's clock has finished and how many rows it woke.
 *
 * 1. ADVANCE: `idleSubscriptions` (100 000) active monthly subscriptions of one sandbox organisation, written
 *    set-based (rows as createSubscription writes them, the wake-index row as scheduleSubscription writes it: due at
 *    the start of nextInvoiceDate in Europe/Copenhagen), start dates spread over 30 days from 5 days ahead, so a
 *    one-day advance makes nothing due. `advances` advances of one day, each timed from the request to the
 *    BusinessClock's answer; then the clock's first page under EXPLAIN ANALYZE (rows read). Target ≤ 1 s (median).
 * 2. BURST: `burstSubscriptions` (5 000) monthly subscriptions of another sandbox organisation, one customer each,
 *    made by the createSubscription use case (so every row, event and wake-index row is the route's), all starting
 *    tomorrow, autoSend false (no mail: the customers have e-mail, but nothing is sent). The clock advances one day;
 *    invoices issued per second: all 5 000 (subscription_id set, status issued) over the time from the advance to the
 *    last `issued_at`. Compared with ISSUE, `POST /v1/invoices?issue=true` for one organisation measured as
 *    issuing.ts does (`benchIssuing`, same lines and callers) with the workflows process's renderer settings (one
 *    page), after the burst in the same run. Target ≥ 0.8 × ISSUE.
 *
 * A warm-up organisation with 20 subscriptions starting tomorrow is advanced first, so the route, the clock, the
 * SubscriptionSchedule and InvoiceIssue objects and the workflows process's Chromium are warm.
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { CONCURRENT_INVOCATIONS, restateQuery } from '../../deploy/local/restate-server.ts';
import { createCustomer } from '../../services/customers/create-customer.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import type { SubscriptionLineInput } from '../../contracts/subscriptions.ts';
import { createSubscription } from '../../services/subscriptions/create-subscription.ts';
import { storedLines } from '../../services/subscriptions/subscription-queries.ts';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { customerBody } from './database.ts';
import { dbCpuProbe } from './db-cpu.ts';
import { cpuReading, descendants, findIndexScan, median, type PlanNode } from './dunning.ts';
import { startDurableStack, WORKFLOWS_RENDER_POOL } from './durable-stack.ts';
import { benchIssuing, type IssuingFigures } from './issuing.ts';

/** The issuing bench's lines without the discount (a subscription line has none). */
const LINES: SubscriptionLineInput[] = [
  { description: 'Rugbrød, groft', quantity: 12, unitPriceOere: 4500, vatRateBps: 2500 },
  { description: 'Levering', quantity: 1, unitPriceOere: 15000, vatRateBps: 2500 },
  { description: 'Kursus i bagning', quantity: 1.5, unitPriceOere: 100000, vatRateBps: 0, vatExemptionReason: 'ML13' },
];

export interface SubscriptionFigures {
  advance: {
    subscriptions: number;
    rounds: { ms: number; woken: number }[];
    medianMs: number;
    /** The BusinessClock's first page after the last advance, custom and generic plan. */
    indexScan: { index: string; plan: string; rowsRead: number; rowsReturned: number; sharedBuffers: number; ms: number };
    genericScan: { index: string; plan: string; rowsRead: number; rowsReturned: number; sharedBuffers: number; ms: number };
    targetMs: number;
    timePass: boolean;
    /** The page read only due rows (index rows read ≤ rows returned), with either plan. */
    rowsPass: boolean;
    pass: boolean;
  };
  burst: {
    subscriptions: number;
    advanceMs: number;
    advanceTxMs: number;
    wakeMs: number;
    wokenByClock: number;
    invocationsLimit: number;
    progress: { sec: number; issued: number; invocations: number }[];
    seconds: number;
    perSec: number;
    firstIssuedSec: number;
    lastIssuedSec: number;
    cpuSec: { workflows: number; chromium: number; restate: number; postgres: number | undefined; bench: number };
  };
  /** POST /v1/invoices?issue=true (and the renderer alone) with the workflows process's renderer settings. */
  issuing: IssuingFigures;
  ratio: number;
  target: number;
  pass: boolean;
}


export async function benchSubscriptions(
  url: string,
  keyring: Keyring,
  opts: {
    idleSubscriptions: number;
    burstSubscriptions: number;
    advances: number;
    concurrency: number;
    durationSec: number;
    warmupSec: number;
    poolMax: number;
    invocationsLimit: number;
    masterKey: Buffer;
    profileDir?: string | undefined;
    log: (msg: string) => void;
  },
): Promise<SubscriptionFigures> {
  const stack = await startDurableStack(url, keyring, { name: 'subscriptions', ...opts });
  const { restate, worker, db, app, woke, cleanups } = stack;
  try {

    const today = copenhagenToday(new Date());
    const tomorrow = addDays(today, 1);
    const newOrganisation = async (name: string, customers: number) => {
      const org = await db.tx((tx) =>
        createOrganization(tx, { name, cvr: '12345678', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', sandbox: true, bankReg: '1234', bankAccount: '0001234567' }),
      );
      const customerIds: string[] = new Array<string>(customers);
      let next = 0;
      await Promise.all(
        Array.from({ length: opts.poolMax }, async () => {
          for (let n = next++; n < customers; n = next++) {
            customerIds[n] = (await db.tx((tx) => createCustomer(tx, keyring, org.organizationId, customerBody(n)))).id;
          }
        }),
      );
      return { orgId: org.organizationId, customerIds, auth: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' } };
    };
    /** `n` monthly subscriptions starting tomorrow, one per customer, through the create use case. */
    const dueTomorrow = async (name: string, n: number) => {
      const o = await newOrganisation(name, n);
      let next = 0;
      await Promise.all(
        Array.from({ length: opts.poolMax }, async () => {
          for (let i = next++; i < n; i = next++) {
            await db.tx((tx) =>
              createSubscription(tx, o.orgId, {
                customerId: o.customerIds[i]!, name: 'Brødabonnement', interval: { unit: 'month', count: 1 }, startDate: tomorrow, dueDays: 14, autoSend: false, lines: LINES,
              }, today),
            );
          }
        }),
      );
      return o;
    };

    let advanced = 0;
    const advance = async (o: { orgId: string; auth: Record<string, string> }, days: number) => {
      woke.delete(o.orgId);
      const t0 = performance.now();
      const res = await app.inject({
        method: 'POST', url: '/v1/test-clock/advance', headers: { ...o.auth, 'idempotency-key': `bench-subscriptions-${process.pid}-${++advanced}` }, payload: { days },
      });
      const ms = performance.now() - t0;
      if (res.statusCode !== 200) throw new Error(`advance answered ${res.statusCode}: ${res.body}`);
      const w = woke.get(o.orgId);
      if (!w) throw new Error('the advance answered, but the BusinessClock was not woken (see the app log)');
      return { ms, woken: w.woken, txMs: w.start - t0, wakeMs: w.at - w.start };
    };
    const issuedCount = (orgId: string) =>
      db.read((sql) => sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM invoices WHERE organization_id = ${orgId} AND subscription_id IS NOT NULL AND status = 'issued'`).then((r) => r[0]!.n);
    const allIssued = async (orgId: string, expected: number, timeoutMs: number, progress?: (issued: number) => Promise<void>) => {
      const until = performance.now() + timeoutMs;
      let lastReport = performance.now();
      for (;;) {
        const n = await issuedCount(orgId);
        if (n >= expected) return;
        if (performance.now() > until) throw new Error(`${n} of ${expected} subscription invoices issued after ${timeoutMs / 1000} s`);
        if (progress && performance.now() - lastReport > 15_000) {
          await progress(n);
          lastReport = performance.now();
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    };

    opts.log(`subscriptions: seeding ${opts.idleSubscriptions} subscriptions (nothing due for 5 days), ${opts.burstSubscriptions} due tomorrow, 20 for the warm-up`);
    const ts = performance.now();
    const warm = await dueTomorrow('Bench Abonnement Opvarmning ApS', 20);
    const burst = await dueTomorrow('Bench Abonnement Travl ApS', opts.burstSubscriptions);
    const idle = await newOrganisation('Bench Abonnement Stille ApS', 100);
    await db.tx(async (tx) => {
      // The rows createSubscription writes (no subscription.created events: they would only feed the webhook relay),
      // monthly, start dates over 30 days from 5 days ahead, and the wake-index row as scheduleSubscription writes it.
      await tx`
        INSERT INTO subscriptions (organization_id, id, customer_id, name, interval_unit, interval_count, start_date, end_date, due_days, auto_send,
                                   lines, status, anchor_date, anchor_period, next_period, next_invoice_date, created_on)
        SELECT ${idle.orgId}, gen_random_uuid(), (${idle.customerIds}::uuid[])[1 + (g - 1) % ${idle.customerIds.length}], 'Brødabonnement', 'month', 1,
               s.start, NULL, 14, false, ${tx.json(storedLines(LINES) as never)}, 'active', s.start, 0, 0, s.start, ${today}::date
        FROM generate_series(1, ${opts.idleSubscriptions}) AS g
        CROSS JOIN LATERAL (SELECT ${addDays(today, 5)}::date + (g % 30) AS start) s`;
      await tx`
        INSERT INTO wake_index (service, handler, key, organization_id, due_at)
        SELECT 'SubscriptionSchedule', 'wake', organization_id::text || ':' || id::text, organization_id,
               next_invoice_date::timestamp AT TIME ZONE 'Europe/Copenhagen'
        FROM subscriptions WHERE organization_id = ${idle.orgId}`;
    });
    await db.sql.unsafe('VACUUM ANALYZE subscriptions, customers, wake_index, events');
    opts.log(`subscriptions: seeded in ${((performance.now() - ts) / 1000).toFixed(1)} s`);

    // Warm-up: 20 periods through the whole path.
    await advance(warm, 1);
    await allIssued(warm.orgId, 20, 120_000);

    // 1. Advances with nothing due.
    opts.log(`subscriptions: ${opts.advances} advances of one day, ${opts.idleSubscriptions} active subscriptions, nothing due`);
    const rounds: SubscriptionFigures['advance']['rounds'] = [];
    for (let i = 0; i < opts.advances; i++) {
      const { ms, woken } = await advance(idle, 1);
      rounds.push({ ms: Math.round(ms * 10) / 10, woken });
    }
    // dueWakes' page (services/clock/wake-index.ts) under EXPLAIN ANALYZE, twice: with the organisation inlined (a
    // custom plan) and as a prepared statement forced to its generic plan (what a driver's prepared statement may get
    // after five executions). Rows read are what the index scans returned plus what filters removed.
    const org = idle.orgId.replace(/[^0-9a-f-]/g, '');
    // The statement dueWakes sends for a first page, word for word (its bound is a row comparison over the
    // organisation's index columns).
    const pageSql = (o: string) => `SELECT service, key, handler, due_at::text AS due_at FROM wake_index
      WHERE organization_id = ${o} AND parked_at IS NULL
        AND (organization_id, due_at) <= (${o}, business_now(${o}))
      ORDER BY organization_id, due_at, service, key LIMIT 500`;
    type Explained = { 'QUERY PLAN': { Plan: PlanNode; 'Execution Time': number }[] }[];
    const explain = (generic: boolean) =>
      db.tx(async (sql) => {
        if (!generic) return sql.unsafe<Explained>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${pageSql(`'${org}'::uuid`)}`);
        await sql.unsafe('SET LOCAL plan_cache_mode = force_generic_plan');
        await sql.unsafe(`PREPARE bench_due_page(uuid) AS ${pageSql('$1')}`);
        try {
          return await sql.unsafe<Explained>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE bench_due_page('${org}')`);
        } finally {
          await sql.unsafe('DEALLOCATE bench_due_page');
        }
      });
    const scanOf = (explained: Explained): SubscriptionFigures['advance']['indexScan'] => {
      const plan = explained[0]!['QUERY PLAN'][0]!;
      const shape: string[] = [];
      let rowsRead = 0;
      let sharedBuffers = 0;
      const walk = (n: PlanNode) => {
        const loops = n['Actual Loops'] ?? 1;
        shape.push(`${n['Node Type']}${n['Index Name'] ? ` on ${n['Index Name']}` : ''} (${(n['Actual Rows'] ?? 0) * loops} rows)`);
        if (n['Index Name']) {
          rowsRead += ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)) * loops;
          sharedBuffers += (n['Shared Hit Blocks'] ?? 0) + (n['Shared Read Blocks'] ?? 0);
        }
        for (const c of n.Plans ?? []) walk(c);
      };
      walk(plan.Plan);
      const scan = findIndexScan(plan.Plan);
      return {
        index: scan?.['Index Name'] ?? `none (${plan.Plan['Node Type']})`,
        plan: shape.join(' > '),
        rowsRead,
        rowsReturned: (plan.Plan['Actual Rows'] ?? 0) * (plan.Plan['Actual Loops'] ?? 1),
        sharedBuffers,
        ms: Math.round(plan['Execution Time'] * 1000) / 1000,
      };
    };
    const indexScan = scanOf(await explain(false));
    const genericScan = scanOf(await explain(true));
    const rowsPass = indexScan.rowsRead <= indexScan.rowsReturned && genericScan.rowsRead <= genericScan.rowsReturned;
    const medianMs = median(rounds.map((r) => r.ms));

    // 2. The burst: every subscription of the organisation reaches its first period's start at once.
    opts.log(`subscriptions: ${opts.burstSubscriptions} periods due at once`);
    const workflowsCpu = cpuReading(() => [worker.pid!]);
    const chromiumCpu = cpuReading(() => descendants(worker.pid!));
    const restateCpu = cpuReading(() => [restate.pid]);
    const dbProbe = dbCpuProbe(url);
    cleanups.push(() => dbProbe.close());
    const dbCpu = await dbProbe.start();
    const benchCpu = process.cpuUsage();
    const wallStart = Date.now();
    const started = performance.now();
    const adv = await advance(burst, 1);
    const progress: SubscriptionFigures['burst']['progress'] = [];
    await allIssued(burst.orgId, opts.burstSubscriptions, 30 * 60_000, async (issued) => {
      const [row] = await restateQuery<{ n: number }>(restate.adminUrl, `SELECT count(*) AS n FROM sys_invocation WHERE target_service_name = 'SubscriptionSchedule' AND status <> 'completed'`).catch(() => [{ n: -1 }]);
      const sec = Math.round((performance.now() - started) / 1000);
      progress.push({ sec, issued, invocations: Number(row?.n ?? -1) });
      opts.log(`subscriptions: ${issued} of ${opts.burstSubscriptions} issued after ${sec} s; ${row?.n} SubscriptionSchedule invocations in Restate`);
    });
    const cpuSec = {
      workflows: Math.round(workflowsCpu() * 10) / 10,
      chromium: Math.round(chromiumCpu() * 10) / 10,
      restate: Math.round(restateCpu() * 10) / 10,
      postgres: await dbCpu().then((us) => (us === undefined ? undefined : Math.round(us / 100_000) / 10)),
      bench: Math.round(((process.cpuUsage(benchCpu).user + process.cpuUsage(benchCpu).system) / 1e6) * 10) / 10,
    };
    const [times] = await db.read((sql) => sql<{ first_issued: number; last_issued: number; n: number; on_day: number }[]>`
      SELECT extract(epoch FROM min(issued_at)) * 1000 AS first_issued, extract(epoch FROM max(issued_at)) * 1000 AS last_issued,
             count(*)::int AS n, (count(*) FILTER (WHERE issue_date = ${tomorrow} AND period_start = ${tomorrow}))::int AS on_day
      FROM invoices WHERE organization_id = ${burst.orgId} AND subscription_id IS NOT NULL AND status = 'issued'`);
    if (times!.n !== opts.burstSubscriptions || times!.on_day !== opts.burstSubscriptions) {
      throw new Error(`expected ${opts.burstSubscriptions} invoices issued on ${tomorrow} for their first period, found ${times!.n} (${times!.on_day} of them so)`);
    }
    const sec = (ms: number) => Math.round(((Number(ms) - wallStart) / 1000) * 100) / 100;
    const seconds = sec(times!.last_issued);

    // ISSUE: the API's issue with the workflows process's renderer settings, measured as issuing.ts does.
    opts.log(`subscriptions: POST /v1/invoices?issue=true and the renderer alone (pool ${WORKFLOWS_RENDER_POOL}, ${opts.concurrency} callers)`);
    const issuing = await benchIssuing(url, keyring, {
      concurrency: opts.concurrency,
      durationSec: opts.durationSec,
      warmupSec: opts.warmupSec,
      poolSize: WORKFLOWS_RENDER_POOL,
      poolMax: opts.poolMax,
    });

    const perSec = opts.burstSubscriptions / seconds;
    const ratio = perSec / issuing.issuing.perSec;
    return {
      advance: { subscriptions: opts.idleSubscriptions, rounds, medianMs, indexScan, genericScan, targetMs: 1000, timePass: medianMs <= 1000, rowsPass, pass: medianMs <= 1000 && rowsPass },
      burst: {
        subscriptions: opts.burstSubscriptions,
        advanceMs: Math.round(adv.ms),
        advanceTxMs: Math.round(adv.txMs),
        wakeMs: Math.round(adv.wakeMs),
        wokenByClock: adv.woken,
        invocationsLimit: opts.invocationsLimit > 0 ? opts.invocationsLimit : Number(CONCURRENT_INVOCATIONS),
        progress,
        seconds,
        perSec: Math.round(perSec * 100) / 100,
        firstIssuedSec: sec(times!.first_issued),
        lastIssuedSec: seconds,
        cpuSec,
      },
      issuing,
      ratio: Math.round(ratio * 1000) / 1000,
      target: 0.8,
      pass: ratio >= 0.8,
    };
  } finally {
    await stack.close();
  }
}

export function formatSubscriptions(f: SubscriptionFigures): string {
  const a = f.advance;
  const b = f.burst;
  const c = b.cpuSec;
  const i = f.issuing;
  return [
    `Subscriptions (a restate-server and the workflows process of their own, a database of its own)`,
    `  advance 1 day, ${a.subscriptions} active subscriptions, nothing due: ${a.rounds.map((r) => `${r.ms.toFixed(0)} ms`).join(', ')} ` +
      `(woken ${a.rounds.map((r) => r.woken).join('/')})`,
    ...([['custom', a.indexScan], ['generic', a.genericScan]] as const).map(([kind, x]) =>
      `    BusinessClock page after the last advance (${kind} plan): ${x.rowsRead} wake rows read, ${x.rowsReturned} due, ${x.sharedBuffers} buffers, ${x.ms} ms: ${x.plan}`),
    `    median ${a.medianMs.toFixed(0)} ms   target ≤ ${a.targetMs} ms   ${a.timePass ? 'PASS' : 'FAIL'}; rows read only the due ones: ${a.rowsPass ? 'PASS' : 'FAIL'}`,
    `  ${b.subscriptions} periods due at once, autoSend false (advance ${b.advanceMs} ms: transaction ${b.advanceTxMs} ms, BusinessClock ${b.wakeMs} ms, ` +
      `${b.wokenByClock} woken; Restate invocation limit ${b.invocationsLimit}): issued from ${b.firstIssuedSec} s to ${b.lastIssuedSec} s`,
    `    issued by the schedule         ${b.perSec.toFixed(1).padStart(7)}/s`,
    `    ISSUE: POST /v1/invoices?issue=true (pool ${i.poolSize}, ${i.concurrency} callers) ${i.issuing.perSec.toFixed(1).padStart(7)}/s   p50 ${i.issuing.p50Ms.toFixed(0)} ms   p99 ${i.issuing.p99Ms.toFixed(0)} ms` +
      `   (renderer alone ${i.renderer.perSec.toFixed(1)}/s; ISSUE / R ${i.ratio.toFixed(2)})`,
    `    ratio ${f.ratio.toFixed(2)} × ISSUE   target ≥ ${f.target} × ISSUE   ${f.pass ? 'PASS' : 'FAIL'}`,
    `    CPU during the burst: workflows process ${c.workflows} s, its Chromium ${c.chromium} s, restate-server ${c.restate} s, ` +
      `PostgreSQL ${c.postgres ?? '?'} s, bench ${c.bench} s, over ${b.seconds} s on ${availableParallelism()} cores`,
  ].join('\n');
}
