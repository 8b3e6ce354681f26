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
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKeyring } from '../../services/shared/crypto.ts';
import { dbCpuProbe } from './db-cpu.ts';
import { customerBody, openBenchDatabase, prepare, type BenchDatabase, type Seeded } from './database.ts';
import { measure, sustained, type CpuProbe, type LoadSpec, type Measurement, type Window } from './load.ts';
import type { ReadyMessage, ServerKind, UsageMessage } from './protocol.ts';
import { formatSustained, formatTable, type Row, type Target } from './report.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');

function intEnv(name: string, dflt: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
}

type RouteId = 'h' | 's' | 's50' | 'i' | 'get' | 'list' | 'post' | 'sustained';
const ROUTE_IDS: readonly RouteId[] = ['h', 's', 's50', 'i', 'get', 'list', 'post', 'sustained'];

const settings = {
  durationSec: intEnv('BENCH_DURATION', 10, 1),
  warmupSec: intEnv('BENCH_WARMUP', 2),
  connections: intEnv('BENCH_CONNECTIONS', 50, 1),
  sustainedSec: intEnv('BENCH_SUSTAINED', 60, 0),
  windowSec: 10,
  poolMax: intEnv('DB_POOL_MAX', 10, 1),
  customers: intEnv('BENCH_CUSTOMERS', 1000, 60),
  cpuProfile: process.env.BENCH_CPU_PROF === '1',
  only: (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as RouteId[],
};
for (const id of settings.only) if (!ROUTE_IDS.includes(id)) throw new Error(`BENCH_ONLY: unknown "${id}"; use ${ROUTE_IDS.join(',')}`);
const wanted = (id: RouteId): boolean => (settings.only.length === 0 || settings.only.includes(id)) && (id !== 'sustained' || settings.sustainedSec > 0);

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
// Servers under test: one child process each, stopped before the next starts, so only one competes for the CPU.

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

  const usageWaiters: ((u: NodeJS.CpuUsage) => void)[] = [];
  const port = await new Promise<number>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`server ${kind} did not start within 30 s`)), 30_000);
    child.on('message', (m: ReadyMessage | UsageMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        res(m.port);
      } else if (m.type === 'usage') {
        usageWaiters.shift()?.(m.cpu);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`server ${kind} exited with ${code} before it was ready`));
    });
  });
  const cpu: CpuProbe = () =>
    new Promise((res) => {
      usageWaiters.push(res);
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
    `duration ${settings.durationSec} s after ${settings.warmupSec} s warm-up, ${settings.connections} connections, ` +
      `pool ${settings.poolMax}, ${settings.customers} customers, sustained ${settings.sustainedSec} s`,
  );
  const database: BenchDatabase = await openBenchDatabase(`faktura_bench_${stamp.replace('-', '_')}_${process.pid}`, log);
  cleanups.push(() => database.close());

  const t = performance.now();
  const seeded: Seeded = await prepare(database.url, keyring, settings.customers, settings.poolMax);
  log(`migrated and seeded ${seeded.customerIds.length} customers in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const dbCpu = dbCpuProbe(database.url);
  cleanups.push(() => dbCpu.close());

  const childEnv = {
    BENCH_DATABASE_URL: database.url,
    DB_POOL_MAX: String(settings.poolMax),
    BENCH_MASTER_KEY: masterKey.toString('hex'),
  };
  const auth = { authorization: `Bearer ${seeded.apiKey}` };
  let posted = 0;
  // Unique per request across warm-up and measurement, and across runs on a shared database server.
  const nextPostBody = () => {
    const n = settings.customers + ++posted;
    return { key: `bench-${runId}-${n}`, body: JSON.stringify(customerBody(n)) };
  };
  const spec = (port: number, path: string, extra: Partial<LoadSpec> = {}): LoadSpec => ({
    url: `http://127.0.0.1:${port}${path}`,
    connections: settings.connections,
    ...extra,
  });
  const results: Partial<Record<RouteId, Measurement>> = {};
  let sustainedResult: { overall: Measurement; windows: Window[] } | undefined;

  const run = async (id: RouteId, label: string, load: LoadSpec, server: Running) => {
    log(`${label}: ${settings.warmupSec} s warm-up + ${settings.durationSec} s`);
    results[id] = await measure(load, settings.warmupSec, settings.durationSec, { server: server.cpu, db: dbCpu });
  };

  if (wanted('h')) {
    const h = await startServer('h', childEnv, profileDir);
    await check('H', `http://127.0.0.1:${h.port}/h`, {}, 200, (b) => (b as { ok?: boolean }).ok === true);
    await run('h', 'H bare JSON', spec(h.port, '/h'), h);
    await h.stop();
  }

  if (wanted('s') || wanted('s50')) {
    const s = await startServer('s', childEnv, profileDir);
    if (wanted('s')) {
      const id = seeded.customerIds[0]!;
      await check('S', `http://127.0.0.1:${s.port}/s/${id}`, {}, 200, (b) => (b as { id?: string }).id === id);
      await run('s', 'S bare PK select', spec(s.port, '/s', { setupRequest: (req) => ({ ...req, path: `/s/${pick(seeded.customerIds)}` }) }), s);
    }
    if (wanted('s50')) {
      const path = `/s50/${seeded.organizationId}`;
      await check('S50', `http://127.0.0.1:${s.port}${path}`, {}, 200, (b) => (b as { data?: unknown[] }).data?.length === 50);
      await run('s50', 'S50 bare 50-row page SELECT', spec(s.port, path), s);
    }
    await s.stop();
  }

  if (wanted('i')) {
    const i = await startServer('i', childEnv, profileDir);
    const json = { 'content-type': 'application/json' };
    await check('I', `http://127.0.0.1:${i.port}/i`, { method: 'POST', headers: json, body: nextPostBody().body }, 201, (b) => !!(b as { id?: string }).id);
    await run('i', 'I bare insert tx', spec(i.port, '/i', { method: 'POST', headers: json, setupRequest: (req) => ({ ...req, body: nextPostBody().body }) }), i);
    await i.stop();
  }

  if (wanted('get') || wanted('list') || wanted('post') || wanted('sustained')) {
    const app = await startServer('app', childEnv, profileDir);
    const base = `http://127.0.0.1:${app.port}`;
    const getSpec = spec(app.port, '/v1/customers', {
      headers: auth,
      setupRequest: (req) => ({ ...req, path: `/v1/customers/${pick(seeded.customerIds)}` }),
    });

    if (wanted('get')) {
      const id = seeded.customerIds[1]!;
      await check('GET /v1/customers/{id}', `${base}/v1/customers/${id}`, { headers: auth }, 200, (b) => {
        const d = (b as { data?: { id?: string; email?: string | null; phone?: string | null } }).data;
        return d?.id === id && typeof d.email === 'string' && typeof d.phone === 'string';
      });
      await run('get', 'GET /v1/customers/{id}', getSpec, app);
    }

    if (wanted('list')) {
      await check('GET /v1/customers?limit=50', `${base}/v1/customers?limit=50`, { headers: auth }, 200, (b) => (b as { data?: unknown[] }).data?.length === 50);
      await run('list', 'GET /v1/customers?limit=50', spec(app.port, '/v1/customers?limit=50', { headers: auth }), app);
    }

    if (wanted('post')) {
      const headers = { ...auth, 'content-type': 'application/json' };
      const first = nextPostBody();
      await check('POST /v1/customers', `${base}/v1/customers`, { method: 'POST', headers: { ...headers, 'idempotency-key': first.key }, body: first.body }, 201, (b) => {
        const d = (b as { data?: { email?: string } }).data;
        return typeof d?.email === 'string' && d.email === (JSON.parse(first.body) as { email: string }).email;
      });
      await run(
        'post',
        'POST /v1/customers',
        spec(app.port, '/v1/customers', {
          method: 'POST',
          headers,
          setupRequest: (req) => {
            const { key, body } = nextPostBody();
            return { ...req, headers: { ...req.headers, 'idempotency-key': key }, body };
          },
        }),
        app,
      );
    }

    if (wanted('sustained')) {
      log(`sustained GET /v1/customers/{id}: ${settings.warmupSec} s warm-up + ${settings.sustainedSec} s`);
      sustainedResult = await sustained(getSpec, settings.warmupSec, settings.sustainedSec, settings.windowSec, { server: app.cpu, db: dbCpu });
    }
    await app.stop();
  }

  // -------------------------------------------------------------------------------------------------------------
  const rps = (id: RouteId) => results[id]?.requestsPerSec;
  const targets: Target[] = [
    { route: 'get', baseline: 's', minRatio: 0.8 },
    { route: 'list', baseline: 's', minRatio: 0.5 },
    { route: 'post', baseline: 'i', minRatio: 0.6 },
  ].map((t) => {
    const r = rps(t.route as RouteId);
    const b = rps(t.baseline as RouteId);
    const ratio = r !== undefined && b ? Math.round((r / b) * 1000) / 1000 : undefined;
    return { ...t, ratio, pass: ratio === undefined ? undefined : ratio >= t.minRatio };
  });
  const labels: Record<RouteId, string> = {
    h: 'H  bare Fastify JSON',
    s: 'S  bare PK SELECT (Db.read)',
    s50: 'S50 bare 50-row SELECT (diagnostic)',
    i: 'I  bare INSERT tx (Db.tx)',
    get: 'GET /v1/customers/{id}',
    list: 'GET /v1/customers?limit=50',
    post: 'POST /v1/customers',
    sustained: 'sustained GET /v1/customers/{id}',
  };
  const rows: Row[] = (['h', 's', 's50', 'i', 'get', 'list', 'post'] as const)
    .filter((id) => results[id])
    .map((id) => ({ label: labels[id], m: results[id]!, target: targets.find((t) => t.route === id) }));

  console.log('');
  console.log(`faktura bench ${runId}: ${settings.connections} connections, ${settings.durationSec} s each after ${settings.warmupSec} s warm-up, DB_POOL_MAX ${settings.poolMax}`);
  console.log(formatTable(rows));
  console.log('cpu µs/req: CPU time per request of the server process (api) and of PostgreSQL (db; pool backends and WAL/IO helpers)');

  let verdict: { firstRps: number; lastRps: number; minRps: number; maxRps: number; lastToFirst: number; stable: boolean } | undefined;
  if (sustainedResult) {
    const w = sustainedResult.windows;
    const full = w.filter((x) => x.toSec - x.fromSec >= settings.windowSec * 0.5);
    const ws = full.length ? full : w;
    const firstRps = ws[0]!.requestsPerSec;
    const lastRps = ws[ws.length - 1]!.requestsPerSec;
    const lastToFirst = firstRps ? Math.round((lastRps / firstRps) * 1000) / 1000 : 0;
    verdict = {
      firstRps,
      lastRps,
      minRps: Math.min(...ws.map((x) => x.requestsPerSec)),
      maxRps: Math.max(...ws.map((x) => x.requestsPerSec)),
      lastToFirst,
      // Run-to-run noise on a small shared machine is a few per cent; a driver queue that grows would cost more.
      stable: lastToFirst >= 0.85,
    };
    console.log('');
    console.log(formatSustained(sustainedResult.overall, w, verdict));
  }

  const invalid = [...Object.entries(results), ...(sustainedResult ? [['sustained', sustainedResult.overall] as const] : [])].filter(
    ([, m]) => m.errors > 0 || m.timeouts > 0 || m.non2xx > 0,
  );

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
    targets,
    sustained: sustainedResult ? { ...sustainedResult, windowSec: settings.windowSec, verdict } : undefined,
    invalid: invalid.map(([id]) => id),
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
