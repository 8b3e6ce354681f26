/**
 * `npm run bench`: throughput and latency of the customer routes against bare baselines, on one database, one pool
 * size and one machine, in one run. See test/bench/README.md for what is measured and why.
 *
 * Exit status: 0 when the run completed (a missed target is a finding, reported in the table and the JSON);
 * 1 when the bench itself failed, including any measured request that did not answer 2xx, because then the
 * figures describe error handling rather than the route.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKeyring } from '../../services/shared/crypto.ts';
import { dbCpuProbe, ticks, TICK_US, type DbCpuProbe } from './db-cpu.ts';
import { startRedis } from '../../deploy/local/redis-server.ts';
import { statementStats } from './statement-stats.ts';
import { customerBody, openBenchDatabase, prepare, type BenchDatabase, type Seeded } from './database.ts';
import { measure, sustained, type CpuProbe, type LoadSpec, type Measurement, type Window } from './load.ts';
import { benchIssuing, formatIssuing, type IssuingFigures } from './issuing.ts';
import { benchEInvoice, formatEInvoice, type EInvoiceFigures } from './einvoice.ts';
import { benchStatement, formatStatement, type StatementFigures } from './statement.ts';
import { benchWebhooks, formatWebhooks, type WebhookFigures } from './webhooks.ts';
import { benchDunning, formatDunning, type DunningFigures } from './dunning.ts';
import { benchSubscriptions, formatSubscriptions, type SubscriptionFigures } from './subscriptions.ts';
import { benchWake, formatWake, type WakeFigures } from './wake.ts';
import { paymentRequest, seedPayments, type PaymentsSeed } from './payments.ts';
import { CASE_CLAIMS, CASE_DEBTORS, caseBody } from './cases.ts';
import type autocannon from 'autocannon';
import postgres from 'postgres';
import { SERVER_KINDS, type ReadyMessage, type ServerKind, type UsageMessage } from './protocol.ts';
import { formatSustained, formatTable, type Row, type SustainedVerdict, type Target } from './report.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');

function intEnv(name: string, dflt: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
}

type RouteId = 'h' | 's' | 's50' | 'i' | 'c0' | 'p0' | 'get' | 'getrl' | 'list' | 'post' | 'pay' | 'balance' | 'k0' | 'cases' | 'batch' | 'sustained' | 'issuing' | 'einvoice' | 'statement' | 'webhooks' | 'dunning' | 'subscriptions' | 'wake';
const ROUTE_IDS: readonly RouteId[] = ['h', 's', 's50', 'i', 'c0', 'p0', 'get', 'getrl', 'list', 'post', 'pay', 'balance', 'k0', 'cases', 'batch', 'sustained', 'issuing', 'einvoice', 'statement', 'webhooks', 'dunning', 'subscriptions', 'wake'];
/** Each diagnostic floor, the route it bounds and the baseline that route's target is measured against. */
const FLOORS: readonly { route: RouteId; floor: RouteId; baseline: RouteId; what: string }[] = [
  { route: 'list', floor: 's50', baseline: 's', what: 'the same page query, decrypted, mapped, cursored and serialised, without auth, hooks or response schema' },
  { route: 'post', floor: 'c0', baseline: 'i', what: 'key lock and lookup, then the customer row and stored response in one round trip' },
  { route: 'pay', floor: 'p0', baseline: 'i', what: 'key and invoice locks with the paid sum in one statement, then payment, event and stored response in one round trip' },
];

const settings = {
  durationSec: intEnv('BENCH_DURATION', 10, 1),
  warmupSec: intEnv('BENCH_WARMUP', 2),
  connections: intEnv('BENCH_CONNECTIONS', 50, 1),
  sustainedSec: intEnv('BENCH_SUSTAINED', 60, 0),
  windowSec: 10,
  poolMax: intEnv('DB_POOL_MAX', 10, 1),
  /**
   * A fixed offered load in requests/s (0: flat out). At a rate every variant can sustain, the CPU µs per request
   * compare two builds of the app with less noise than throughput does on a busy machine.
   */
  rate: intEnv('BENCH_RATE', 0),
  /** Rounds through all routes; figures are medians over rounds. More than one helps on a busy machine. */
  rounds: intEnv('BENCH_ROUNDS', 1, 1),
  customers: intEnv('BENCH_CUSTOMERS', 1000, 60),
  /** Operations per POST /v1/batch (the decided maximum) and the connections sending batches at once. */
  batchSize: intEnv('BENCH_BATCH_SIZE', 100, 1),
  batchConnections: intEnv('BENCH_BATCH_CONNECTIONS', 10, 1),
  /** The long-history customer whose balance is read, and the open invoices payments are registered on. */
  balanceInvoices: intEnv('BENCH_BALANCE_INVOICES', 10_000, 100),
  payInvoices: intEnv('BENCH_PAY_INVOICES', 2000, 10),
  /**
   * The balance read has a latency target, so it runs at a fixed, moderate offered load (requests/s over this many
   * connections): flat out, its p99 would be the length of the queue the bench itself built.
   */
  balanceRate: intEnv('BENCH_BALANCE_RATE', 50, 1),
  balanceConnections: intEnv('BENCH_BALANCE_CONNECTIONS', 5, 1),
  cpuProfile: process.env.BENCH_CPU_PROF === '1',
  /** `1`: the embedded server loads pg_stat_statements and the top statements of each measured route are printed. */
  statementStats: process.env.BENCH_PG_STATS === '1',
  only: (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as RouteId[],
};
for (const id of settings.only) if (!ROUTE_IDS.includes(id)) throw new Error(`BENCH_ONLY: unknown "${id}"; use ${ROUTE_IDS.join(',')}`);
const wanted = (id: RouteId): boolean =>
  // The cases stage is the route and its floor, measured in the same run: `cases` selects both; `batch` selects the
  // single POST /v1/customers it is measured against.
  (settings.only.length === 0 ||
    settings.only.includes(id) ||
    (id === 'k0' && settings.only.includes('cases')) ||
    // The GET route with the API rate limits counting in Redis, beside the same route without them (README, "Rate
    // limits in Redis"): `get` selects both.
    (id === 'getrl' && settings.only.includes('get')) ||
    (id === 'post' && settings.only.includes('batch'))) &&
  (id !== 'sustained' || settings.sustainedSec > 0);

const now = new Date();
const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15); // 20250101-120000
const runId = `${stamp}-${process.pid}`;
const log = (msg: string) => console.error(`[bench] ${msg}`);

// ---------------------------------------------------------------------------------------------------------------
// Everything the run starts is registered here and undone in reverse order, on success, failure or Ctrl-C.

const cleanups: (() => Promise<void>)[] = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length) {
    const step = cleanups.pop()!;
    try {
      await step();
    } catch (err) {
      log(`clean-up step failed: ${String(err)}`);
    }
  }
}
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`${signal}: stopping`);
    void cleanUp().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Servers under test: one child process per kind, all started up front and stopped at the end. Only the one under
// load uses CPU; the others sit idle on their sockets.

interface Running {
  port: number;
  cpu: CpuProbe;
  stop(): Promise<void>;
}

async function startServer(kind: ServerKind, env: Record<string, string>, profileDir: string | undefined): Promise<Running> {
  const execArgv = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${kind}-${process.pid}.cpuprofile`] : [];
  const child: ChildProcess = fork(join(HERE, 'server.ts'), [kind], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.send({ type: 'stop' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  cleanups.push(stop);

  const usageWaiters: { resolve: (u: NodeJS.CpuUsage) => void; reject: (e: Error) => void }[] = [];
  void exited.then((code) => {
    for (const w of usageWaiters.splice(0)) w.reject(new Error(`server ${kind} exited with ${code} during the run`));
  });
  const port = await new Promise<number>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`server ${kind} did not start within 30 s`)), 30_000);
    child.on('message', (m: ReadyMessage | UsageMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        res(m.port);
      } else if (m.type === 'usage') {
        usageWaiters.shift()?.resolve(m.cpu);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`server ${kind} exited with ${code} before it was ready`));
    });
  });
  const cpu: CpuProbe = () =>
    new Promise((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`server ${kind} is not running`));
      usageWaiters.push({ resolve, reject });
      child.send({ type: 'usage' });
    });
  return { port, cpu, stop };
}

// ---------------------------------------------------------------------------------------------------------------
// Each route is checked once by hand before it is loaded, so a broken route fails the bench instead of being
// measured as a fast error page.

async function check(what: string, url: string, init: RequestInit, expectStatus: number, verify: (body: unknown) => boolean): Promise<void> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  if (res.status !== expectStatus || !verify(body)) {
    throw new Error(`${what}: expected ${expectStatus} and a well-formed body, got ${res.status} ${text.slice(0, 300)}`);
  }
}

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** The figure of a route over all rounds: each metric's median (with one round, that round's figures). */
function combine(rounds: Measurement[]): Measurement {
  const first = rounds[0]!;
  if (rounds.length === 1) return first;
  const med = (f: (m: Measurement) => number | undefined): number | undefined => {
    const xs = rounds.map(f).filter((x): x is number => x !== undefined);
    return xs.length ? Math.round(median(xs) * 100) / 100 : undefined;
  };
  const statusCodes: Record<string, number> = {};
  for (const m of rounds) for (const [k, v] of Object.entries(m.statusCodes)) statusCodes[k] = (statusCodes[k] ?? 0) + v;
  return {
    requestsPerSec: med((m) => m.requestsPerSec)!,
    p50Ms: med((m) => m.p50Ms)!,
    p99Ms: med((m) => m.p99Ms)!,
    totalRequests: rounds.reduce((n, m) => n + m.totalRequests, 0),
    durationSec: rounds.reduce((n, m) => n + m.durationSec, 0),
    errors: rounds.reduce((n, m) => n + m.errors, 0),
    timeouts: rounds.reduce((n, m) => n + m.timeouts, 0),
    non2xx: rounds.reduce((n, m) => n + m.non2xx, 0),
    statusCodes,
    serverCpuUsPerRequest: med((m) => m.serverCpuUsPerRequest),
    serverCpuCores: med((m) => m.serverCpuCores),
    serverCpuSystemShare: med((m) => m.serverCpuSystemShare),
    dbCpuUsPerRequest: med((m) => m.dbCpuUsPerRequest),
    ...(first.redisCpuUsPerRequest !== undefined ? { redisCpuUsPerRequest: med((m) => m.redisCpuUsPerRequest) } : {}),
  };
}

interface Route {
  id: Exclude<RouteId, 'sustained'>;
  label: string;
  server: ServerKind;
  /** One hand-made request that must succeed before the route is loaded. */
  check(base: string): Promise<void>;
  load(port: number): LoadSpec;
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const loadAtStart = loadavg()[0]!;
  // Anything else busy on the machine takes CPU from the server, PostgreSQL and autocannon alike, and not evenly.
  if (loadAtStart > availableParallelism()) log(`warning: 1-minute load average is ${loadAtStart.toFixed(1)} before the run; figures will be noisy`);
  const masterKey = randomBytes(32);
  const keyring = createKeyring(masterKey);
  const resultsDir = join(ROOT, 'bench-results');
  const profileDir = settings.cpuProfile ? join(resultsDir, `profiles-${stamp}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  log(
    `${settings.rounds} round(s) of ${settings.durationSec} s per route after ${settings.warmupSec} s warm-up, ${settings.connections} connections, ` +
      `pool ${settings.poolMax}, ${settings.customers} customers, sustained ${settings.sustainedSec} s`,
  );
  const database: BenchDatabase = await openBenchDatabase(`faktura_bench_${stamp.replace('-', '_')}_${process.pid}`, log, {
    statementStats: settings.statementStats,
  });
  cleanups.push(() => database.close());

  const t = performance.now();
  const seeded: Seeded = await prepare(database.url, keyring, settings.customers, settings.poolMax);
  log(`migrated and seeded ${seeded.customerIds.length} customers in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  let paymentsSeed: PaymentsSeed | undefined;
  if (wanted('pay') || wanted('p0') || wanted('balance')) {
    const tp = performance.now();
    paymentsSeed = await seedPayments(database.url, keyring, seeded.organizationId, {
      balanceInvoices: settings.balanceInvoices,
      openInvoices: settings.payInvoices,
      poolMax: settings.poolMax,
    });
    log(`seeded a customer with ${settings.balanceInvoices} invoices and ${settings.payInvoices} open invoices in ${((performance.now() - tp) / 1000).toFixed(1)} s`);
  }

  const dbCpu = dbCpuProbe(database.url);
  cleanups.push(() => dbCpu.close());

  const auth = { authorization: `Bearer ${seeded.apiKey}` };
  const json = { 'content-type': 'application/json' };
  let posted = 0;
  // Unique per request across warm-up, rounds and runs on a shared database server.
  const nextPostBody = () => {
    const n = settings.customers + ++posted;
    return { key: `bench-${runId}-${n}`, body: JSON.stringify(customerBody(n)) };
  };
  const spec = (port: number, path: string, extra: Partial<LoadSpec> = {}): LoadSpec => ({
    url: `http://127.0.0.1:${port}${path}`,
    connections: settings.connections,
    overallRate: settings.rate,
    ...extra,
  });
  const randomCustomerPath = (prefix: string) => (req: autocannon.Request) => ({ ...req, path: `${prefix}/${pick(seeded.customerIds)}` });
  let paid = 0;
  const nextPayment = (invoiceIndex?: number) => paymentRequest(paymentsSeed!, runId, ++paid, invoiceIndex);
  // Cases: a unique externalReference and Idempotency-Key per request, route and floor alike.
  let casesPosted = 0;
  const nextCase = () => {
    const n = ++casesPosted;
    return { key: `bench-case-${runId}-${n}`, body: JSON.stringify(caseBody(runId, n)) };
  };
  // Batches: BENCH_BATCH_SIZE customer.create operations each, new customers under one new Idempotency-Key per batch.
  let batches = 0;
  const nextBatch = () => {
    const n = ++batches;
    const operations = Array.from({ length: settings.batchSize }, () => ({ op: 'customer.create', params: JSON.parse(nextPostBody().body) as unknown }));
    return { key: `bench-batch-${runId}-${n}`, body: JSON.stringify({ operations }) };
  };
  const casePost = (path: string, headers: Record<string, string>) => (req: autocannon.Request) => {
    const { key, body } = nextCase();
    return { ...req, path, headers: { ...req.headers, ...headers, 'idempotency-key': key }, body };
  };

  const routes: Route[] = [
    {
      id: 'h',
      label: 'H  bare Fastify JSON',
      server: 'h',
      check: (base) => check('H', `${base}/h`, {}, 200, (b) => (b as { ok?: boolean }).ok === true),
      load: (port) => spec(port, '/h'),
    },
    {
      id: 's',
      label: 'S  bare PK SELECT (Db.read)',
      server: 's',
      check: (base) => {
        const id = seeded.customerIds[0]!;
        return check('S', `${base}/s/${seeded.organizationId}/${id}`, {}, 200, (b) => (b as { id?: string }).id === id);
      },
      load: (port) => spec(port, `/s/${seeded.organizationId}`, { setupRequest: randomCustomerPath(`/s/${seeded.organizationId}`) }),
    },
    {
      id: 's50',
      label: 'S50 bare 50-row SELECT (diagnostic)',
      server: 's',
      // The floor does the page's whole work: every seeded customer has an e-mail and a phone, decrypted; there is a next page.
      check: (base) =>
        check('S50', `${base}/s50/${seeded.organizationId}`, {}, 200, (b) => {
          const page = b as { data?: { email?: unknown; phone?: unknown }[]; meta?: { nextCursor?: unknown } };
          return page.data?.length === 50 && page.data.every((c) => typeof c.email === 'string' && typeof c.phone === 'string') &&
            typeof page.meta?.nextCursor === 'string';
        }),
      load: (port) => spec(port, `/s50/${seeded.organizationId}`),
    },
    {
      id: 'i',
      label: 'I  bare INSERT tx (Db.tx)',
      server: 'i',
      check: (base) => check('I', `${base}/i`, { method: 'POST', headers: json, body: nextPostBody().body }, 201, (b) => !!(b as { id?: string }).id),
      load: (port) => spec(port, '/i', { method: 'POST', headers: json, setupRequest: (req) => ({ ...req, body: nextPostBody().body }) }),
    },
    {
      id: 'get',
      label: 'GET /v1/customers/{id}',
      server: 'app',
      check: (base) => {
        const id = seeded.customerIds[1]!;
        return check('GET /v1/customers/{id}', `${base}/v1/customers/${id}`, { headers: auth }, 200, (b) => {
          const d = (b as { data?: { id?: string; email?: string | null; phone?: string | null } }).data;
          return d?.id === id && typeof d.email === 'string' && typeof d.phone === 'string';
        });
      },
      load: (port) => spec(port, '/v1/customers', { headers: auth, setupRequest: randomCustomerPath('/v1/customers') }),
    },
    {
      id: 'getrl',
      label: 'GET /v1/customers/{id}, rate limit in Redis',
      server: 'applimit',
      check: async (base) => {
        const id = seeded.customerIds[2]!;
        await check('GET /v1/customers/{id} (rate limited)', `${base}/v1/customers/${id}`, { headers: auth }, 200, (b) => (b as { data?: { id?: string } }).data?.id === id);
        // The limiter answered: a request without its headers would be measuring the route without it.
        const res = await fetch(`${base}/v1/customers/${id}`, { headers: auth });
        await res.text();
        if (!res.headers.get('ratelimit-limit')) throw new Error('GET /v1/customers/{id} (rate limited) carries no RateLimit-Limit header');
      },
      load: (port) => spec(port, '/v1/customers', { headers: auth, setupRequest: randomCustomerPath('/v1/customers') }),
    },
    {
      id: 'list',
      label: 'GET /v1/customers?limit=50',
      server: 'app',
      check: (base) =>
        check('GET /v1/customers?limit=50', `${base}/v1/customers?limit=50`, { headers: auth }, 200, (b) => (b as { data?: unknown[] }).data?.length === 50),
      load: (port) => spec(port, '/v1/customers?limit=50', { headers: auth }),
    },
    {
      id: 'post',
      label: 'POST /v1/customers',
      server: 'app',
      check: (base) => {
        const first = nextPostBody();
        const headers = { ...auth, ...json, 'idempotency-key': first.key };
        return check('POST /v1/customers', `${base}/v1/customers`, { method: 'POST', headers, body: first.body }, 201, (b) => {
          const d = (b as { data?: { email?: string } }).data;
          return typeof d?.email === 'string' && d.email === (JSON.parse(first.body) as { email: string }).email;
        });
      },
      load: (port) =>
        spec(port, '/v1/customers', {
          method: 'POST',
          headers: { ...auth, ...json },
          setupRequest: (req) => {
            const { key, body } = nextPostBody();
            return { ...req, headers: { ...req.headers, 'idempotency-key': key }, body };
          },
        }),
    },
    {
      id: 'c0',
      label: 'C0 bare customer create (diagnostic)',
      server: 'i',
      check: (base) => {
        const first = nextPostBody();
        const headers = { ...json, 'idempotency-key': first.key };
        return check('C0', `${base}/c0/${seeded.floorOrganizationId}/customers`, { method: 'POST', headers, body: first.body }, 201, (b) => {
          const d = (b as { data?: { email?: string } }).data;
          return typeof d?.email === 'string';
        });
      },
      load: (port) =>
        spec(port, `/c0/${seeded.floorOrganizationId}/customers`, {
          method: 'POST',
          headers: json,
          setupRequest: (req) => {
            const { key, body } = nextPostBody();
            return { ...req, headers: { ...req.headers, 'idempotency-key': key }, body };
          },
        }),
    },
    {
      id: 'p0',
      label: 'P0 bare payment writes (diagnostic)',
      server: 'i',
      check: (base) => {
        const p = nextPayment(1);
        const headers = { ...json, 'idempotency-key': p.key };
        return check('P0', `${base}/p0/${seeded.organizationId}${p.path}`, { method: 'POST', headers, body: p.body }, 201, (b) => {
          const r = b as { meta?: { outcome?: string } };
          return r.meta?.outcome === 'partial';
        });
      },
      load: (port) =>
        spec(port, `/p0/${seeded.organizationId}/v1/invoices`, {
          method: 'POST',
          headers: json,
          setupRequest: (req) => {
            const p = nextPayment();
            return { ...req, path: `/p0/${seeded.organizationId}${p.path}`, headers: { ...req.headers, 'idempotency-key': p.key }, body: p.body };
          },
        }),
    },
    {
      id: 'pay',
      label: 'POST /v1/invoices/{id}/payments',
      server: 'app',
      check: (base) => {
        const p = nextPayment(0);
        const headers = { ...auth, ...json, 'idempotency-key': p.key };
        return check('POST /v1/invoices/{id}/payments', `${base}${p.path}`, { method: 'POST', headers, body: p.body }, 201, (b) => {
          const r = b as { data?: { paidOere?: number }; meta?: { outcome?: string } };
          return r.meta?.outcome === 'partial' && r.data?.paidOere === 100;
        });
      },
      load: (port) =>
        spec(port, '/v1/invoices', {
          method: 'POST',
          headers: { ...auth, ...json },
          setupRequest: (req) => {
            const p = nextPayment();
            return { ...req, path: p.path, headers: { ...req.headers, 'idempotency-key': p.key }, body: p.body };
          },
        }),
    },
    {
      id: 'balance',
      label: `GET /v1/customers/{id}/balance (${settings.balanceInvoices} invoices, ${settings.balanceRate}/s)`,
      server: 'app',
      check: (base) =>
        check('GET /v1/customers/{id}/balance', `${base}/v1/customers/${paymentsSeed!.balanceCustomerId}/balance`, { headers: auth }, 200, (b) => {
          const d = (b as { data?: { outstandingOere?: number; creditOere?: number } }).data;
          return d?.outstandingOere === paymentsSeed!.expected.outstandingOere && d.creditOere === paymentsSeed!.expected.creditOere;
        }),
      load: (port) =>
        spec(port, `/v1/customers/${paymentsSeed!.balanceCustomerId}/balance`, {
          headers: auth,
          connections: settings.balanceConnections,
          overallRate: settings.balanceRate,
        }),
    },
    {
      id: 'k0',
      label: `K0 bare case writes (${CASE_CLAIMS} claims, ${CASE_DEBTORS} debtors)`,
      server: 'i',
      check: (base) => {
        const first = nextCase();
        const headers = { ...json, 'idempotency-key': first.key };
        return check('K0', `${base}/k0/${seeded.floorOrganizationId}/cases`, { method: 'POST', headers, body: first.body }, 201, (b) => {
          const d = (b as { data?: { caseNumber?: number } }).data;
          return d?.caseNumber === 1;
        });
      },
      load: (port) =>
        spec(port, `/k0/${seeded.floorOrganizationId}/cases`, { method: 'POST', headers: json, setupRequest: casePost(`/k0/${seeded.floorOrganizationId}/cases`, {}) }),
    },
    {
      id: 'cases',
      label: `POST /v1/cases (${CASE_CLAIMS} claims, ${CASE_DEBTORS} debtors)`,
      server: 'app',
      check: async (base) => {
        const first = nextCase();
        const headers = { ...auth, ...json, 'idempotency-key': first.key };
        await check('POST /v1/cases', `${base}/v1/cases`, { method: 'POST', headers, body: first.body }, 201, (b) => {
          const d = (b as { data?: { caseNumber?: number; state?: string } }).data;
          return d?.caseNumber === 1 && d.state === 'OPRETTET';
        });
        // What the route stored is what the floor stores: the claims and the debtors, every personal field encrypted.
        const sql = postgres(database.url, { max: 1, onnotice: () => {} });
        try {
          const [row] = await sql<{ claims: number; debtors: number; fields: number }[]>`
            SELECT (SELECT count(*) FROM case_claims k WHERE k.case_id = c.id AND k.description_enc IS NOT NULL)::int AS claims,
                   (SELECT count(*) FROM case_debtors d WHERE d.case_id = c.id AND d.cpr_enc IS NOT NULL AND d.address_enc IS NOT NULL
                      AND d.email_enc IS NOT NULL AND d.phone_enc IS NOT NULL)::int AS debtors,
                   (SELECT count(*) FROM case_debtors d WHERE d.case_id = c.id AND d.name_enc IS NOT NULL)::int AS fields
            FROM collection_cases c WHERE c.organization_id = ${seeded.organizationId} AND c.case_number = 1`;
          if (row?.claims !== CASE_CLAIMS || row.debtors !== CASE_DEBTORS || row.fields !== CASE_DEBTORS) {
            throw new Error(`POST /v1/cases stored ${JSON.stringify(row)}, not ${CASE_CLAIMS} claims and ${CASE_DEBTORS} debtors with every field`);
          }
        } finally {
          await sql.end();
        }
      },
      load: (port) => spec(port, '/v1/cases', { method: 'POST', headers: { ...auth, ...json }, setupRequest: casePost('/v1/cases', {}) }),
    },
    {
      id: 'batch',
      label: `POST /v1/batch (${settings.batchSize} × customer.create, ${settings.batchConnections} connections)`,
      server: 'app',
      check: async (base) => {
        const first = nextBatch();
        const headers = { ...auth, ...json, 'idempotency-key': first.key };
        await check('POST /v1/batch', `${base}/v1/batch`, { method: 'POST', headers, body: first.body }, 200, (b) => {
          const results = (b as { data?: { results?: { status?: number; data?: { email?: string } }[] } }).data?.results;
          return results?.length === settings.batchSize && results.every((r) => r.status === 201 && typeof r.data?.email === 'string');
        });
      },
      load: (port) =>
        spec(port, '/v1/batch', {
          method: 'POST',
          headers: { ...auth, ...json },
          connections: settings.batchConnections,
          setupRequest: (req) => {
            const { key, body } = nextBatch();
            return { ...req, headers: { ...req.headers, 'idempotency-key': key }, body };
          },
        }),
    },
  ];
  const selected = routes.filter((r) => wanted(r.id));

  // All servers stay up for the whole run, so rounds can alternate between them; an idle one costs no CPU.
  const servers = new Map<ServerKind, Running>();
  const kinds = new Set<ServerKind>(selected.map((r) => r.server));
  if (wanted('sustained')) kinds.add('app');
  // The rate-limited app counts in a private redis-server, as `npm start` runs one; its CPU is read from /proc.
  let redis: { url: string; probe: DbCpuProbe } | undefined;
  if (kinds.has('applimit')) {
    const dir = mkdtempSync(join(tmpdir(), 'faktura-bench-redis-'));
    const server = await startRedis({ dataDir: dir });
    cleanups.push(async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    const probe: DbCpuProbe = {
      start: () => {
        const before = ticks(server.pid);
        return Promise.resolve(() => {
          const after = ticks(server.pid);
          return Promise.resolve(before === undefined || after === undefined ? undefined : (after - before) * TICK_US);
        });
      },
      close: () => Promise.resolve(),
    };
    redis = { url: server.url, probe };
  }
  for (const kind of SERVER_KINDS) {
    if (kinds.has(kind)) servers.set(kind, await startServer(kind, { ...childEnv(database.url, masterKey), ...(redis ? { BENCH_REDIS_URL: redis.url } : {}) }, profileDir));
  }
  const base = (kind: ServerKind) => `http://127.0.0.1:${servers.get(kind)!.port}`;
  for (const r of selected) await r.check(base(r.server));

  const perRound: Partial<Record<RouteId, Measurement[]>> = {};
  for (let round = 1; round <= settings.rounds; round++) {
    for (const r of selected) {
      const server = servers.get(r.server)!;
      log(`${settings.rounds > 1 ? `round ${round}/${settings.rounds} ` : ''}${r.label}: ${settings.warmupSec} s warm-up + ${settings.durationSec} s`);
      const stats = settings.statementStats ? await statementStats(database.url) : undefined;
      const m = await measure(r.load(server.port), settings.warmupSec, settings.durationSec, {
        server: server.cpu,
        db: dbCpu,
        ...(r.server === 'applimit' && redis ? { redis: redis.probe } : {}),
      });
      (perRound[r.id] ??= []).push(m);
      if (stats) await stats.print(r.label, m.totalRequests);
    }
  }

  let sustainedResult: { overall: Measurement; windows: Window[] } | undefined;
  if (wanted('sustained')) {
    const app = servers.get('app')!;
    log(`sustained GET /v1/customers/{id}: ${settings.warmupSec} s warm-up + ${settings.sustainedSec} s`);
    const load = routes.find((r) => r.id === 'get')!.load(app.port);
    sustainedResult = await sustained(load, settings.warmupSec, settings.sustainedSec, settings.windowSec, { server: app.cpu, db: dbCpu });
  }
  for (const server of servers.values()) await server.stop();

  // -------------------------------------------------------------------------------------------------------------
  const results: Partial<Record<RouteId, Measurement>> = {};
  for (const [id, ms] of Object.entries(perRound) as [RouteId, Measurement[]][]) results[id] = combine(ms);
  const targets: Target[] = [
    { route: 'get', baseline: 's', minRatio: 0.8 },
    { route: 'list', baseline: 's', minRatio: 0.5 },
    { route: 'post', baseline: 'i', minRatio: 0.6 },
    { route: 'pay', baseline: 'i', minRatio: 0.5 },
    // Against its floor measured in the same run (README, "Collection cases").
    { route: 'cases', baseline: 'k0', minRatio: 0.7 },
    // Operations per second through POST /v1/batch against single POST /v1/customers calls per second: a batch must
    // never be slower than the calls it replaces.
    { route: 'batch', baseline: 'post', minRatio: 1.0, perRequest: settings.batchSize },
  ].map(({ perRequest = 1, ...t }) => {
    const r = perRound[t.route as RouteId];
    const b = perRound[t.baseline as RouteId];
    // Each round's ratio compares two runs minutes apart at most; the median of those resists drifting load.
    const ratios = r && b ? r.map((m, i) => (m.requestsPerSec * perRequest) / b[i]!.requestsPerSec) : [];
    const ratio = ratios.length ? Math.round(median(ratios) * 1000) / 1000 : undefined;
    return { ...t, ratio, roundRatios: ratios.map((x) => Math.round(x * 1000) / 1000), pass: ratio === undefined ? undefined : ratio >= t.minRatio };
  });
  const rows: Row[] = routes
    .filter((r) => results[r.id])
    .map((r) => ({ label: r.label, m: results[r.id]!, target: targets.find((t) => t.route === r.id) }));

  console.log('');
  console.log(
    `faktura bench ${runId}: ${settings.connections} connections, ${settings.durationSec} s per route after ${settings.warmupSec} s warm-up, ` +
      `DB_POOL_MAX ${settings.poolMax}${settings.rounds > 1 ? `, median of ${settings.rounds} rounds` : ''}`,
  );
  console.log(formatTable(rows));
  console.log('api / db µs/req: CPU time per request of the server process and of PostgreSQL (pool backends, WAL and I/O helpers)');
  if (settings.rounds > 1) {
    for (const t of targets) if (t.roundRatios.length) console.log(`${t.route}/${t.baseline} per round: ${t.roundRatios.map((x) => x.toFixed(2)).join('  ')}`);
  }
  // Not a target: how far the list is from the same 50-row page served without the app's work.
  // The diagnostic floors: each does only what its route must do at the least (the same page without the app around it;
  // the same writes without the app around them), so a target above its floor's ratio cannot be met on this machine
  // by any implementation of the route on this schema.
  const floors = FLOORS.flatMap((f) => {
    const r = perRound[f.route];
    const fl = perRound[f.floor];
    const b = perRound[f.baseline];
    if (!fl || (!b && !r)) return [];
    const round3 = (x: number) => Math.round(x * 1000) / 1000;
    // Without the baseline in the run (BENCH_ONLY=s50,list), the route against its floor is still worth printing.
    const floorRatio = b ? round3(median(fl.map((m, i) => m.requestsPerSec / b[i]!.requestsPerSec))) : undefined;
    const routeVsFloor = r ? round3(median(r.map((m, i) => m.requestsPerSec / fl[i]!.requestsPerSec))) : undefined;
    const target = targets.find((t) => t.route === f.route)!.minRatio;
    console.log(
      `floor of ${f.route}: ` +
        (floorRatio === undefined ? `${f.floor.toUpperCase()} (no ${f.baseline.toUpperCase()} in this run)` : `${f.floor.toUpperCase()} = ${floorRatio.toFixed(2)} × ${f.baseline.toUpperCase()} (target ${target})`) +
        (routeVsFloor === undefined ? '' : `; ${f.route} / ${f.floor.toUpperCase()} = ${routeVsFloor.toFixed(2)}`) + ` (${f.what})`,
    );
    return [{ ...f, floorRatio, routeVsFloor, target }];
  });
  const casesTarget = targets.find((t) => t.route === 'cases')!;
  if (results.cases && results.k0) {
    console.log(
      `cases: POST /v1/cases ${results.cases.requestsPerSec.toFixed(1)} req/s, floor K0 ${results.k0.requestsPerSec.toFixed(1)} req/s, ` +
        `ratio ${casesTarget.ratio!.toFixed(2)}, target >= ${casesTarget.minRatio}: ${casesTarget.pass ? 'PASS' : 'FAIL'}`,
    );
  }
  const batchTarget = targets.find((t) => t.route === 'batch')!;
  if (results.batch && results.post) {
    console.log(
      `batch: ${(results.batch.requestsPerSec * settings.batchSize).toFixed(0)} customer.create operations/s in batches of ${settings.batchSize}, ` +
        `single POST /v1/customers ${results.post.requestsPerSec.toFixed(0)} req/s, ratio ${batchTarget.ratio!.toFixed(2)}, ` +
        `target >= ${batchTarget.minRatio}: ${batchTarget.pass ? 'PASS' : 'FAIL'}`,
    );
  }
  // A latency target, not a ratio: the balance read at a fixed offered load (median p99 over rounds).
  const balanceTarget = results.balance
    ? { route: 'balance', maxP99Ms: 20, p99Ms: results.balance.p99Ms, pass: results.balance.p99Ms <= 20 }
    : undefined;
  if (balanceTarget) {
    console.log(
      `balance p99 ${balanceTarget.p99Ms.toFixed(2)} ms at ${settings.balanceRate} req/s over ${settings.balanceConnections} connections, ` +
        `target <= ${balanceTarget.maxP99Ms} ms: ${balanceTarget.pass ? 'PASS' : 'FAIL'}`,
    );
  }

  // What the shared rate limiter costs the GET route: the same route and load with the limits counting in Redis, in
  // the same run (median of the per-round differences).
  let redisLimiter: Record<string, number | undefined> | undefined;
  if (perRound.get && perRound.getrl) {
    const off = perRound.get;
    const on = perRound.getrl;
    const diff = (f: (m: Measurement) => number | undefined) => {
      const xs = on.map((m, i) => (f(m) === undefined || f(off[i]!) === undefined ? undefined : f(m)! - f(off[i]!)!)).filter((x): x is number => x !== undefined);
      return xs.length ? Math.round(median(xs) * 100) / 100 : undefined;
    };
    redisLimiter = {
      ratio: Math.round(median(on.map((m, i) => m.requestsPerSec / off[i]!.requestsPerSec)) * 1000) / 1000,
      apiCpuUsPerRequest: diff((m) => m.serverCpuUsPerRequest),
      dbCpuUsPerRequest: diff((m) => m.dbCpuUsPerRequest),
      redisCpuUsPerRequest: results.getrl?.redisCpuUsPerRequest,
      p50Ms: diff((m) => m.p50Ms),
      p99Ms: diff((m) => m.p99Ms),
      versusS: perRound.s ? Math.round(median(on.map((m, i) => m.requestsPerSec / perRound.s![i]!.requestsPerSec)) * 1000) / 1000 : undefined,
    };
    const signed = (x: number | undefined, digits: number) => (x === undefined ? 'n/a' : `${x >= 0 ? '+' : ''}${x.toFixed(digits)}`);
    console.log(
      `rate limit in Redis: GET /v1/customers/{id} ${results.getrl!.requestsPerSec.toFixed(0)} req/s vs ${results.get!.requestsPerSec.toFixed(0)} without ` +
        `(ratio ${redisLimiter.ratio!.toFixed(2)}${redisLimiter.versusS === undefined ? '' : `, ${redisLimiter.versusS.toFixed(2)} × S`}); ` +
        `api ${signed(redisLimiter.apiCpuUsPerRequest, 1)} µs/req, redis-server ${redisLimiter.redisCpuUsPerRequest?.toFixed(1) ?? 'n/a'} µs/req, ` +
        `p50 ${signed(redisLimiter.p50Ms, 2)} ms, p99 ${signed(redisLimiter.p99Ms, 2)} ms`,
    );
  }

  let verdict: SustainedVerdict | undefined;
  if (sustainedResult) {
    const w = sustainedResult.windows;
    const full = w.filter((x) => x.toSec - x.fromSec >= settings.windowSec * 0.5);
    const ws = full.length ? full : w;
    const first = ws[0]!;
    const last = ws[ws.length - 1]!;
    const ratio = (a: number | undefined, b: number | undefined) => (a && b ? Math.round((a / b) * 1000) / 1000 : undefined);
    const lastToFirst = ratio(last.requestsPerSec, first.requestsPerSec) ?? 0;
    const cpuLastToFirst = ratio(last.serverCpuUsPerRequest, first.serverCpuUsPerRequest);
    // Run-to-run noise on a small shared machine is a few per cent; a driver queue that grows would cost more.
    const stable = lastToFirst >= 0.85;
    verdict = {
      firstRps: first.requestsPerSec,
      lastRps: last.requestsPerSec,
      minRps: Math.min(...ws.map((x) => x.requestsPerSec)),
      maxRps: Math.max(...ws.map((x) => x.requestsPerSec)),
      lastToFirst,
      cpuLastToFirst,
      stable,
      // Throughput that falls while the CPU per request stays put was taken by something else on the machine.
      cause: stable ? undefined : cpuLastToFirst !== undefined && cpuLastToFirst <= 1.15 ? 'machine' : 'server',
    };
    console.log('');
    console.log(formatSustained(sustainedResult.overall, w, verdict));
  }

  // Issuing: the renderer alone against POST /v1/invoices?issue=true, in this process (rendering runs in Chromium).
  let issuing: IssuingFigures | undefined;
  if (wanted('issuing')) {
    log('issuing: renderer alone, then POST /v1/invoices?issue=true');
    issuing = await benchIssuing(database.url, keyring, {
      concurrency: intEnv('BENCH_ISSUE_CONCURRENCY', 4, 1),
      durationSec: settings.durationSec,
      warmupSec: settings.warmupSec,
      poolSize: intEnv('BENCH_RENDER_POOL', 2, 1),
      poolMax: settings.poolMax,
    });
    console.log('');
    console.log(formatIssuing(issuing));
  }

  // E-invoices: the renderer alone against building the e-invoice that embeds its PDF, per profile, on the same issued
  // invoices, in this process like issuing.
  let einvoice: EInvoiceFigures | undefined;
  if (wanted('einvoice')) {
    log('einvoice: renderer alone, then buildEInvoice and GET /v1/invoices/{id}/einvoice per profile');
    einvoice = await benchEInvoice(database.url, keyring, {
      concurrency: intEnv('BENCH_ISSUE_CONCURRENCY', 4, 1),
      durationSec: settings.durationSec,
      warmupSec: settings.warmupSec,
      poolSize: intEnv('BENCH_RENDER_POOL', 2, 1),
      poolMax: settings.poolMax,
    });
    console.log('');
    console.log(formatEInvoice(einvoice));
  }

  // Bank statements: one camt.053 import matching and booking its entries, against the payment route's own rate, on a
  // database of its own (its thousands of open invoices would change what the other stages' reads cost).
  let statement: StatementFigures | undefined;
  if (wanted('statement')) {
    statement = await benchStatement(await database.sibling('statement'), keyring, {
      entries: intEnv('BENCH_STATEMENT_ENTRIES', 10_000, 10),
      routeInvoices: intEnv('BENCH_STATEMENT_ROUTE_INVOICES', 2000, 10),
      concurrency: intEnv('BENCH_STATEMENT_CONCURRENCY', 10, 1),
      poolMax: settings.poolMax,
      log,
    });
    console.log('');
    console.log(formatStatement(statement));
  }

  // Webhook fan-out: committed events to local receivers through the relay, Restate and the delivery objects.
  let webhooks: WebhookFigures | undefined;
  if (wanted('webhooks')) {
    // A database of its own: the workflows process it starts sweeps up what earlier stages queued (thousands of
    // payment receipts to render), which would be measured as fan-out time.
    webhooks = await benchWebhooks(await database.sibling('webhooks'), keyring, {
      events: intEnv('BENCH_WEBHOOK_EVENTS', 1000, 1),
      receivers: intEnv('BENCH_WEBHOOK_RECEIVERS', 3, 1),
      rate: intEnv('BENCH_WEBHOOK_RATE', 200, 1),
      poolMax: settings.poolMax,
      masterKey,
      profileDir,
      log,
    });
    console.log('');
    console.log(formatWebhooks(webhooks));
  }

  // Dunning: a clock advance with nothing due among 100 000 open invoices, and 2 000 reminders due at once against
  // the renderer alone; a database, a restate-server and a workflows process of its own, like the webhook stage.
  let dunning: DunningFigures | undefined;
  if (wanted('dunning')) {
    dunning = await benchDunning(await database.sibling('dunning'), keyring, {
      idleInvoices: intEnv('BENCH_DUNNING_INVOICES', 100_000, 1),
      burstInvoices: intEnv('BENCH_DUNNING_BURST', 2000, 1),
      advances: intEnv('BENCH_DUNNING_ADVANCES', 3, 1),
      concurrency: intEnv('BENCH_ISSUE_CONCURRENCY', 4, 1),
      otherRenderPool: intEnv('BENCH_RENDER_POOL', 2, 1),
      durationSec: settings.durationSec,
      warmupSec: settings.warmupSec,
      poolMax: settings.poolMax,
      invocationsLimit: intEnv('BENCH_RESTATE_INVOCATIONS', 0),
      lateInterest: process.env.BENCH_DUNNING_INTEREST === '1',
      masterKey,
      profileDir,
      log,
    });
    console.log('');
    console.log(formatDunning(dunning));
  }

  // Subscriptions: a clock advance with nothing due among 100 000 active subscriptions, and 5 000 periods due at once
  // against the API's issue with the workflows process's renderer settings; a database, restate-server and workflows
  // process of its own.
  let subscriptions: SubscriptionFigures | undefined;
  if (wanted('subscriptions')) {
    subscriptions = await benchSubscriptions(await database.sibling('subscriptions'), keyring, {
      idleSubscriptions: intEnv('BENCH_SUBSCRIPTIONS_IDLE', 100_000, 1),
      burstSubscriptions: intEnv('BENCH_SUBSCRIPTIONS_BURST', 5000, 1),
      advances: intEnv('BENCH_DUNNING_ADVANCES', 3, 1),
      concurrency: intEnv('BENCH_ISSUE_CONCURRENCY', 4, 1),
      durationSec: settings.durationSec,
      warmupSec: settings.warmupSec,
      poolMax: settings.poolMax,
      invocationsLimit: intEnv('BENCH_RESTATE_INVOCATIONS', 0),
      masterKey,
      profileDir,
      log,
    });
    console.log('');
    console.log(formatSubscriptions(subscriptions));
  }

  // Wake: the wake index as the scheduler with cheap handlers (lateness over a day's rows, the same-instant burst
  // against the engine's bare rate, a noisy neighbour); a database, restate-server and worker of its own.
  let wake: WakeFigures | undefined;
  if (wanted('wake')) {
    wake = await benchWake(await database.sibling('wake'), {
      rows: intEnv('BENCH_WAKE_ROWS', 200_000, 1),
      windowSec: intEnv('BENCH_WAKE_WINDOW', 90, 10),
      orgs: intEnv('BENCH_WAKE_ORGS', 20_000, 2000),
      noisy: intEnv('BENCH_WAKE_NOISY', 20_000, 1),
      poolMax: settings.poolMax,
      log,
    });
    console.log('');
    console.log(formatWake(wake));
  }

  const all: [string, Measurement][] = [];
  for (const [id, ms] of Object.entries(perRound)) for (const m of ms) all.push([id, m]);
  if (sustainedResult) all.push(['sustained', sustainedResult.overall]);
  const invalid = all.filter(([, m]) => m.errors > 0 || m.timeouts > 0 || m.non2xx > 0);

  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `bench-${stamp}.json`);
  const report = {
    runId,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    settings: { ...settings, database: database.server },
    machine: {
      node: process.version,
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      loadAverage1mAtStart: loadAtStart,
      loadAverage1mAtEnd: loadavg()[0],
    },
    results,
    rounds: perRound,
    targets,
    balanceTarget,
    redisLimiter,
    issuing,
    einvoice,
    statement,
    webhooks,
    dunning,
    subscriptions,
    wake,
    floors,
    sustained: sustainedResult ? { ...sustainedResult, windowSec: settings.windowSec, verdict } : undefined,
    invalid: [...new Set(invalid.map(([id]) => id))],
    profiles: profileDir ? relative(ROOT, profileDir) : undefined,
  };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log('');
  console.log(`results: ${relative(process.cwd(), file) || file}`);
  if (profileDir) console.log(`CPU profiles: ${relative(process.cwd(), profileDir)} (summarise with node_modules/.bin/node test/bench/profile-summary.ts <file>)`);

  if (invalid.length) {
    for (const [id, m] of invalid) log(`${id}: ${m.errors} errors, ${m.timeouts} timeouts, ${m.non2xx} non-2xx (${JSON.stringify(m.statusCodes)})`);
    log('some measured requests failed, so those figures are not valid');
    return 1;
  }
  return 0;
}

function childEnv(url: string, masterKey: Buffer): Record<string, string> {
  return { BENCH_DATABASE_URL: url, DB_POOL_MAX: String(settings.poolMax), BENCH_MASTER_KEY: masterKey.toString('hex') };
}

main()
  .then(async (code) => {
    await cleanUp();
    if (!interrupted) process.exit(code);
  })
  .catch(async (err: unknown) => {
    console.error(err);
    await cleanUp();
    if (!interrupted) process.exit(1);
  });
