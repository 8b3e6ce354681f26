/**
 * The dunning benchmark: what a test clock advance costs when nothing is due, and how fast reminders are rendered and
 * mailed when many come due at once.
 *
 * On a database of its own (run.ts hands it a migrated sibling): a restate-server of its own (temp directory); the
 * workflows process as production runs it (`runWorkflows` in a forked child: the Dunning objects, the BusinessClock,
 * the housekeeping loop, its own Chromium, the .eml file mailer under a temp DATA_DIR); and in this process, standing
 * in for the API, the real app (`buildApp`) for `POST /v1/test-clock/advance`. The app's after-commit wake is the
 * BusinessClock's `wakeDue` through the ingress, as in production, but as a request-response call instead of a
 * one-way send, so the bench knows when the organisation's BusinessClock has finished (and how many rows it woke).
 *
 * Invoices are written with set-based SQL (issuing them through the API would measure Chromium): issued invoices with
 * a document, a line, the seller and buyer as printed, customers with e-mail made by the use case, and each invoice's
 * Dunning wake-index row as the issuing trigger writes it (migration 014): due at the start of due_date + 1 in
 * Europe/Copenhagen.
 *
 * 1. ADVANCE: `idleInvoices` (100 000) open invoices in one sandbox organisation, due dates spread over 60 days from
 *    5 days ahead, so an advance of one day makes nothing due. Each of `advances` advances of one day is timed from
 *    the request until the BusinessClock's response. Target ≤ 1 s. The rows read are the woken count and the index
 *    scan of the BusinessClock's first page (EXPLAIN ANALYZE after the advance).
 * 2. BURST: `burstInvoices` (2 000) open invoices of another sandbox organisation, one customer each, all due today;
 *    the clock advances 8 days (past due + 7, reminder 1's day). Reminders per second: all of them delivered
 *    (`delivery = 'done'`) over the time from the advance to the last delivery (the database's `delivered_at`).
 *    Compared with R, the renderer alone rendering the same reminder (`render('reminder', view)`, the view of the
 *    first reminder as loadReminderView reads it) with the workflows process's renderer settings, in this process
 *    after the burst. Target ≥ 0.8 × R. CPU time per component (the workflows process, its Chromium, restate-server,
 *    PostgreSQL) during the burst says where the time went.
 *
 * A warm-up organisation with 20 invoices due today is advanced 8 days first: the route, the BusinessClock, the
 * Dunning objects, the workflows process's Chromium and its mailer are warm before anything is measured.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { CONCURRENT_INVOCATIONS, restateQuery } from '../../deploy/local/restate-server.ts';
import { createChromiumRenderer } from '../../activities/pdf/chromium-renderer.ts';
import { dueWakes } from '../../services/clock/wake-index.ts';
import { createCustomer } from '../../services/customers/create-customer.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { loadSeller, printedSeller } from '../../services/invoices/document-parties.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import { loadReminderView } from '../../services/reminders/reminder-document.ts';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { customerBody } from './database.ts';
import { dbCpuProbe } from './db-cpu.ts';
import { closedLoop } from './issuing.ts';
import { startDurableStack, WORKFLOWS_RENDER_POOL } from './durable-stack.ts';

export interface DunningFigures {
  advance: {
    invoices: number;
    /** Each advance of one day: request to BusinessClock response, rows it woke, due rows left after. */
    rounds: { ms: number; woken: number; dueLeft: number }[];
    medianMs: number;
    /** The BusinessClock's first page after the last advance, as PostgreSQL ran it. */
    indexScan: { index: string; rowsRead: number; rowsReturned: number; sharedBuffers: number; ms: number };
    targetMs: number;
    pass: boolean;
  };
  burst: {
    invoices: number;
    advanceMs: number;
    /** Of the advance: its transaction (with the past-due announcements), then the BusinessClock's wake. */
    advanceTxMs: number;
    wakeMs: number;
    /** restate-server's invoker limit (RESTATE_WORKER__INVOKER__CONCURRENT_INVOCATIONS_LIMIT), or its default. */
    invocationsLimit: number;
    /** Dunning invocations running or queued in Restate, sampled every 15 s during the burst. */
    dunningInvocations: { sec: number; delivered: number; invocations: number }[];
    wokenByClock: number;
    seconds: number;
    perSec: number;
    /** Seconds after the advance: last reminder taken, first and last delivered. */
    lastTakenSec: number;
    firstDeliveredSec: number;
    lastDeliveredSec: number;
    /** CPU seconds during the burst per component; undefined where /proc does not show it. */
    cpuSec: { workflows: number; chromium: number; restate: number; postgres: number | undefined; bench: number };
  };
  renderer: { poolSize: number; concurrency: number; perSec: number; p50Ms: number; p99Ms: number; count: number };
  /** R with another pool size (BENCH_RENDER_POOL), for comparison only. */
  rendererOtherPool?: { poolSize: number; perSec: number; p50Ms: number; p99Ms: number; count: number };
  ratio: number;
  target: number;
  pass: boolean;
}

const TICK_SEC = 0.01;

/** utime + stime of one process, in ticks; undefined when it is gone. */
export function ticks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Every live descendant of `root` (not `root` itself), from /proc's parent ids. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** CPU seconds of a set of processes between two readings (a process that appeared meanwhile counts whole). */
export function cpuReading(pids: () => number[]): () => number {
  const before = new Map<number, number>();
  for (const pid of pids()) before.set(pid, ticks(pid) ?? 0);
  return () => {
    let sum = 0;
    for (const pid of new Set([...before.keys(), ...pids()])) {
      const t = ticks(pid);
      if (t !== undefined) sum += t - (before.get(pid) ?? 0);
    }
    return sum * TICK_SEC;
  };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

export function findIndexScan(node: PlanNode): PlanNode | undefined {
  if (node['Index Name']) return node;
  for (const child of node.Plans ?? []) {
    const found = findIndexScan(child);
    if (found) return found;
  }
  return undefined;
}

export async function benchDunning(
  url: string,
  keyring: Keyring,
  opts: {
    idleInvoices: number;
    burstInvoices: number;
    advances: number;
    concurrency: number;
    otherRenderPool: number;
    durationSec: number;
    warmupSec: number;
    poolMax: number;
    /** restate-server's concurrent-invocations-limit; 0 keeps the server's default. */
    invocationsLimit: number;
    /** BENCH_DUNNING_INTEREST=1: the warm-up and burst organisations charge statutory interest and the compensation. */
    lateInterest?: boolean;
    masterKey: Buffer;
    profileDir?: string | undefined;
    log: (msg: string) => void;
  },
): Promise<DunningFigures> {
  const stack = await startDurableStack(url, keyring, { name: 'dunning', ...opts });
  const { restate, worker, db, pdf, app, woke, cleanups } = stack;
  try {

    const today = copenhagenToday(new Date());
    /** A sandbox organisation with `customers` customers (e-mail, address) and `invoices` issued invoices. */
    const organisation = async (name: string, customers: number, invoices: number, dueDate: (g: string) => string) => {
      const org = await db.tx((tx) =>
        createOrganization(tx, { name, cvr: '12345678', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', sandbox: true, bankReg: '1234', bankAccount: '0001234567' }),
      );
      const orgId = org.organizationId;
      const document = await db.tx((tx) =>
        // Content-addressed and per organisation: the bytes name the organisation.
        createPostgresDocumentStore().put(tx, { organizationId: orgId, contentType: 'application/pdf', bytes: Buffer.from(`%PDF-1.4\n% bench placeholder ${orgId}\n`) }),
      );
      const customerIds: string[] = new Array<string>(customers);
      let next = 0;
      await Promise.all(
        Array.from({ length: opts.poolMax }, async () => {
          for (let n = next++; n < customers; n = next++) {
            customerIds[n] = (await db.tx((tx) => createCustomer(tx, keyring, orgId, customerBody(n)))).id;
          }
        }),
      );
      await db.tx(async (tx) => {
        const seller = printedSeller(await loadSeller(tx, orgId));
        const due = tx.unsafe(dueDate('g'));
        await tx`
          INSERT INTO invoices (id, organization_id, type, status, number, customer_id, issue_date, due_date, payment_terms_days,
                                net_oere, vat_oere, gross_oere, document_sha256, issued_at, seller_snapshot, buyer_snapshot)
          SELECT gen_random_uuid(), ${orgId}, 'invoice', 'issued', g, c.id, d.due - 14, d.due, 14,
                 125000, 0, 125000, ${document.sha256}, now(), ${tx.json(seller as never)},
                 jsonb_build_object('name', c.name, 'cvr', c.cvr, 'street', c.address->>'street', 'postalCode', c.address->>'postalCode',
                                    'city', c.address->>'city', 'country', c.address->>'country', 'contactPerson', c.contact_person)
          FROM generate_series(1, ${invoices}) AS g
          CROSS JOIN LATERAL (SELECT (${due})::date AS due) d
          JOIN customers c ON c.organization_id = ${orgId} AND c.id = (${customerIds}::uuid[])[1 + (g - 1) % ${customers}]`;
        await tx`
          INSERT INTO invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price_oere, vat_rate_bps, vat_exemption_reason,
                                     discount_oere, net_oere, vat_oere, gross_oere)
          SELECT organization_id, id, 0, 'Kursus i bagning', 1, gross_oere, 0, 'ML13', 0, gross_oere, 0, gross_oere
          FROM invoices WHERE organization_id = ${orgId}`;
        await tx`INSERT INTO number_series (organization_id, next_number) VALUES (${orgId}, ${invoices + 1})
                 ON CONFLICT (organization_id) DO UPDATE SET next_number = EXCLUDED.next_number`;
        // Each invoice's lifecycle row as the issuing trigger writes it (migration 014): the day after its due date.
        await tx`
          INSERT INTO wake_index (service, handler, key, organization_id, due_at)
          SELECT 'Dunning', 'wake', organization_id::text || ':' || id::text, organization_id,
                 (due_date + 1)::timestamp AT TIME ZONE 'Europe/Copenhagen'
          FROM invoices WHERE organization_id = ${orgId} AND type = 'invoice' AND status = 'issued'`;
      });
      return { orgId, auth: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' } };
    };

    let advanced = 0;
    const advance = async (o: { orgId: string; auth: Record<string, string> }, days: number) => {
      woke.delete(o.orgId);
      const t0 = performance.now();
      const res = await app.inject({
        method: 'POST', url: '/v1/test-clock/advance', headers: { ...o.auth, 'idempotency-key': `bench-dunning-${process.pid}-${++advanced}` }, payload: { days },
      });
      const ms = performance.now() - t0;
      if (res.statusCode !== 200) throw new Error(`advance answered ${res.statusCode}: ${res.body}`);
      const w = woke.get(o.orgId);
      if (!w) throw new Error('the advance answered, but the BusinessClock was not woken (see the app log)');
      return { ms, woken: w.woken, txMs: w.start - t0, wakeMs: w.at - w.start };
    };
    const reminderCounts = (orgId: string) =>
      db.read((sql) => sql<{ taken: number; done: number; none: number }[]>`
        SELECT count(*)::int AS taken, (count(*) FILTER (WHERE delivery = 'done'))::int AS done, (count(*) FILTER (WHERE delivery = 'none'))::int AS none
        FROM reminders WHERE organization_id = ${orgId}`).then((r) => r[0]!);
    const allDelivered = async (orgId: string, expected: number, timeoutMs: number, progress?: (done: number) => Promise<void>) => {
      const until = performance.now() + timeoutMs;
      let lastReport = performance.now();
      for (;;) {
        const c = await reminderCounts(orgId);
        if (c.none > 0) throw new Error(`${c.none} reminders were not delivered (delivery 'none'): see their delivery_error`);
        if (c.done >= expected) return;
        if (performance.now() > until) throw new Error(`${c.done} of ${expected} reminders delivered after ${timeoutMs / 1000} s`);
        if (progress && performance.now() - lastReport > 15_000) {
          await progress(c.done);
          lastReport = performance.now();
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    };

    opts.log(`dunning: seeding ${opts.idleInvoices} invoices (nothing due for 5 days), ${opts.burstInvoices} due today, 20 for the warm-up`);
    const ts = performance.now();
    const warm = await organisation('Bench Rykker Opvarmning ApS', 20, 20, () => `'${today}'::date`);
    const idle = await organisation('Bench Rykker Stille ApS', 100, opts.idleInvoices, (g) => `'${addDays(today, 5)}'::date + (${g} % 60)`);
    const burst = await organisation('Bench Rykker Travl ApS', opts.burstInvoices, opts.burstInvoices, () => `'${today}'::date`);
    if (opts.lateInterest) {
      // The default plan, with interest posted at each step and the 310 kr compensation (docs/reminders.md).
      for (const o of [warm, burst]) {
        await db.sql`
          INSERT INTO reminder_settings (organization_id, max_reminders, fee_oere, cadence_days, auto_collections, payment_reminder_enabled,
                                         payment_reminder_days, letter_fallback, late_interest, compensation)
          VALUES (${o.orgId}, 3, NULL, '{7,14,21}', false, false, 3, false, 'statutory', true)`;
      }
    }
    await db.sql.unsafe('VACUUM ANALYZE invoices, invoice_lines, customers, wake_index');
    opts.log(`dunning: seeded in ${((performance.now() - ts) / 1000).toFixed(1)} s`);

    // Warm-up: 20 reminders through the whole path.
    await advance(warm, 8);
    await allDelivered(warm.orgId, 20, 120_000);

    // 1. Advances with nothing due.
    opts.log(`dunning: ${opts.advances} advances of one day, ${opts.idleInvoices} open invoices, nothing due`);
    const rounds: DunningFigures['advance']['rounds'] = [];
    for (let i = 0; i < opts.advances; i++) {
      const { ms, woken } = await advance(idle, 1);
      const dueLeft = (await dueWakes(db, idle.orgId, null, 10)).length;
      rounds.push({ ms: Math.round(ms * 10) / 10, woken, dueLeft });
    }
    // dueWakes' first page (services/clock/wake-index.ts), word for word, with the organisation's id inlined (our own
    // uuid): a custom plan.
    const org = idle.orgId.replace(/[^0-9a-f-]/g, '');
    const [explained] = await db.read((sql) => sql.unsafe<{ 'QUERY PLAN': { Plan: PlanNode; 'Execution Time': number }[] }[]>(`
      EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
      SELECT service, key, handler, due_at::text AS due_at FROM wake_index
      WHERE organization_id = '${org}'::uuid AND parked_at IS NULL
        AND (organization_id, due_at) <= ('${org}'::uuid, business_now('${org}'::uuid))
      ORDER BY organization_id, due_at, service, key LIMIT 500`));
    const plan = explained!['QUERY PLAN'][0]!;
    const scan = findIndexScan(plan.Plan);
    const indexScan = {
      index: scan?.['Index Name'] ?? `none (${plan.Plan['Node Type']})`,
      // What the scan touched: rows it returned and rows of other organisations it filtered out.
      rowsRead: ((scan?.['Actual Rows'] ?? NaN) + (scan?.['Rows Removed by Filter'] ?? 0)) * (scan?.['Actual Loops'] ?? 1),
      rowsReturned: (scan?.['Actual Rows'] ?? NaN) * (scan?.['Actual Loops'] ?? 1),
      sharedBuffers: (scan?.['Shared Hit Blocks'] ?? 0) + (scan?.['Shared Read Blocks'] ?? 0),
      ms: Math.round(plan['Execution Time'] * 1000) / 1000,
    };
    const medianMs = median(rounds.map((r) => r.ms));

    // 2. The burst: every invoice of the organisation reaches reminder 1's day at once.
    opts.log(`dunning: ${opts.burstInvoices} reminders due at once`);
    const workflowsCpu = cpuReading(() => [worker.pid!]);
    const chromiumCpu = cpuReading(() => descendants(worker.pid!));
    const restateCpu = cpuReading(() => [restate.pid]);
    const dbProbe = dbCpuProbe(url);
    cleanups.push(() => dbProbe.close());
    const dbCpu = await dbProbe.start();
    const benchCpu = process.cpuUsage();
    const wallStart = Date.now();
    const started = performance.now();
    const adv = await advance(burst, 8);
    // Restate's view: Dunning invocations running or queued (a housekeeping pass re-pokes rows still due a minute on).
    const dunningInvocations: DunningFigures['burst']['dunningInvocations'] = [];
    await allDelivered(burst.orgId, opts.burstInvoices, 30 * 60_000, async (done) => {
      const [row] = await restateQuery<{ n: number }>(restate.adminUrl, `SELECT count(*) AS n FROM sys_invocation WHERE target_service_name = 'Dunning' AND status <> 'completed'`).catch(() => [{ n: -1 }]);
      const sec = Math.round((performance.now() - started) / 1000);
      dunningInvocations.push({ sec, delivered: done, invocations: Number(row?.n ?? -1) });
      opts.log(`dunning: ${done} of ${opts.burstInvoices} delivered after ${sec} s; ${row?.n} Dunning invocations in Restate`);
    });
    const cpuSec = {
      workflows: Math.round(workflowsCpu() * 10) / 10,
      chromium: Math.round(chromiumCpu() * 10) / 10,
      restate: Math.round(restateCpu() * 10) / 10,
      postgres: await dbCpu().then((us) => (us === undefined ? undefined : Math.round(us / 100_000) / 10)),
      bench: Math.round(((process.cpuUsage(benchCpu).user + process.cpuUsage(benchCpu).system) / 1e6) * 10) / 10,
    };
    const [times] = await db.read((sql) => sql<{ last_taken: number; first_delivered: number; last_delivered: number; first_id: string; n: number; numbered: number }[]>`
      SELECT extract(epoch FROM max(created_at)) * 1000 AS last_taken, extract(epoch FROM min(delivered_at)) * 1000 AS first_delivered,
             extract(epoch FROM max(delivered_at)) * 1000 AS last_delivered, (array_agg(id ORDER BY id))[1]::text AS first_id,
             count(*)::int AS n, (count(*) FILTER (WHERE type = 'reminder' AND reminder_number = 1 AND channel = 'email'))::int AS numbered
      FROM reminders WHERE organization_id = ${burst.orgId}`);
    if (times!.n !== opts.burstInvoices || times!.numbered !== opts.burstInvoices) {
      throw new Error(`expected ${opts.burstInvoices} e-mailed reminders no. 1, found ${times!.n} reminders (${times!.numbered} of them no. 1 by e-mail)`);
    }
    if (opts.lateInterest) {
      // With interest on, every reminder of the burst posted its 7 days' interest: the stage measured that work.
      const [charged] = await db.read((sql) => sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM reminders WHERE organization_id = ${burst.orgId} AND interest_oere > 0`);
      if (charged!.n !== opts.burstInvoices) throw new Error(`expected interest on ${opts.burstInvoices} reminders, found it on ${charged!.n}`);
      opts.log(`dunning: interest posted on all ${charged!.n} reminders of the burst`);
    }
    const sec = (ms: number) => Math.round(((Number(ms) - wallStart) / 1000) * 100) / 100;
    const seconds = sec(times!.last_delivered);

    // R: the renderer alone, the same reminder, the workflows process's pool size.
    opts.log(`dunning: R, the renderer alone (pool ${WORKFLOWS_RENDER_POOL}, ${opts.concurrency} callers)`);
    const view = await db.read((sql) => loadReminderView(sql, keyring, burst.orgId, times!.first_id));
    if (!view) throw new Error('no document view for the first reminder');
    const renderOnce = async () => void (await pdf.render('reminder', view));
    await closedLoop(opts.concurrency, opts.warmupSec, renderOnce);
    const r = await closedLoop(opts.concurrency, opts.durationSec, renderOnce);
    let rendererOtherPool: DunningFigures['rendererOtherPool'];
    if (opts.otherRenderPool !== WORKFLOWS_RENDER_POOL) {
      const other = createChromiumRenderer({ poolSize: opts.otherRenderPool });
      try {
        const once = async () => void (await other.render('reminder', view));
        await closedLoop(opts.concurrency, opts.warmupSec, once);
        rendererOtherPool = { poolSize: opts.otherRenderPool, ...(await closedLoop(opts.concurrency, opts.durationSec, once)) };
      } finally {
        await other.close();
      }
    }

    const perSec = opts.burstInvoices / seconds;
    const ratio = perSec / r.perSec;
    return {
      advance: { invoices: opts.idleInvoices, rounds, medianMs, indexScan, targetMs: 1000, pass: medianMs <= 1000 },
      burst: {
        invoices: opts.burstInvoices,
        advanceMs: Math.round(adv.ms),
        advanceTxMs: Math.round(adv.txMs),
        wakeMs: Math.round(adv.wakeMs),
        invocationsLimit: opts.invocationsLimit > 0 ? opts.invocationsLimit : Number(CONCURRENT_INVOCATIONS),
        dunningInvocations,
        wokenByClock: adv.woken,
        seconds,
        perSec: Math.round(perSec * 100) / 100,
        lastTakenSec: sec(times!.last_taken),
        firstDeliveredSec: sec(times!.first_delivered),
        lastDeliveredSec: seconds,
        cpuSec,
      },
      renderer: { poolSize: WORKFLOWS_RENDER_POOL, concurrency: opts.concurrency, ...r },
      ...(rendererOtherPool ? { rendererOtherPool } : {}),
      ratio: Math.round(ratio * 1000) / 1000,
      target: 0.8,
      pass: ratio >= 0.8,
    };
  } finally {
    await stack.close();
  }
}

export function formatDunning(f: DunningFigures): string {
  const a = f.advance;
  const b = f.burst;
  const c = b.cpuSec;
  return [
    `Dunning (a restate-server and the workflows process of their own, .eml mailer, a database of its own)`,
    `  advance 1 day, ${a.invoices} open invoices, nothing due: ${a.rounds.map((r) => `${r.ms.toFixed(0)} ms`).join(', ')} ` +
      `(woken ${a.rounds.map((r) => r.woken).join('/')}, due left ${a.rounds.map((r) => r.dueLeft).join('/')})`,
    `    BusinessClock page after the last advance: ${a.indexScan.rowsRead} wake rows read (${a.indexScan.rowsReturned} due) via ${a.indexScan.index}, ` +
      `${a.indexScan.sharedBuffers} buffers, ${a.indexScan.ms} ms`,
    `    median ${a.medianMs.toFixed(0)} ms   target ≤ ${a.targetMs} ms   ${a.pass ? 'PASS' : 'FAIL'}`,
    `  ${b.invoices} reminders due at once (advance ${b.advanceMs} ms: transaction ${b.advanceTxMs} ms, BusinessClock ${b.wakeMs} ms, ${b.wokenByClock} woken; ` +
      `Restate invocation limit ${b.invocationsLimit}): all taken by ${b.lastTakenSec} s, ` +
      `delivered from ${b.firstDeliveredSec} s to ${b.lastDeliveredSec} s`,
    `    rendered and mailed           ${b.perSec.toFixed(1).padStart(7)}/s`,
    `    R: renderer alone (pool ${f.renderer.poolSize}) ${f.renderer.perSec.toFixed(1).padStart(7)}/s   p50 ${f.renderer.p50Ms.toFixed(0)} ms   p99 ${f.renderer.p99Ms.toFixed(0)} ms` +
      (f.rendererOtherPool ? `   (pool ${f.rendererOtherPool.poolSize}: ${f.rendererOtherPool.perSec.toFixed(1)}/s, for comparison)` : ''),
    `    ratio ${f.ratio.toFixed(2)} × R   target ≥ ${f.target} × R   ${f.pass ? 'PASS' : 'FAIL'}`,
    `    CPU during the burst: workflows process ${c.workflows} s, its Chromium ${c.chromium} s, restate-server ${c.restate} s, ` +
      `PostgreSQL ${c.postgres ?? '?'} s, bench ${c.bench} s, over ${b.seconds} s on ${availableParallelism()} cores`,
  ].join('\n');
}
