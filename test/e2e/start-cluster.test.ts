import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as http2 from 'node:http2';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProxyStats } from '../../deploy/local/haproxy.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { REPLICATION, restateClusterStatus } from '../../deploy/local/restate-cluster.ts';
import type { RuntimeInfo } from '../../deploy/local/runtime-file.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { ROOT } from '../helpers/scripts.ts';

const NODE = join(ROOT, 'node_modules/.bin/node');
const BLOCK_END = '(Ctrl-C stops everything)';
const PROCESSES = [
  'postgres', 'redis', 'restate-1', 'restate-2', 'restate-3', 'proxy-internal', 'workflows-1', 'workflows-2', 'api-1', 'api-2', 'pay-1', 'pay-2', 'edge-api', 'edge-pay',
];

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Requests per second per key; the burst is twice that. */
const RATE = 5;

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

/**
 * `npm run start:cluster` as an operator runs it, on a fresh DATA_DIR: the block of `npm start` plus one line per
 * process, Restate as a three-node cluster with replication 2, both API replicas answering behind the proxy, a
 * durable step (an invoice's mail) through the workflows processes, an API replica killed without the proxy
 * missing a request, and a clean stop on SIGTERM.
 */
describe('npm run start:cluster: the production shape on one machine', function () {
  this.timeout(180_000);
  let dataDir: string;
  let port: number;
  let child: ChildProcess | undefined;
  let stdout = '';
  let stderr = '';
  let exited: Promise<number | null>;

  const readRuntime = (): RuntimeInfo => JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')) as RuntimeInfo;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'faktura-cluster-e2e-'));
    port = await freePort();
    // Only what a fresh clone has, as for npm start: no DATABASE_URL, no key.
    child = spawn(NODE, ['deploy/local/start-cluster.ts'], {
      cwd: ROOT,
      // A small rate, so that the shared limit shows in a few requests.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATA_DIR: dataDir, PORT: String(port), RATE_LIMIT_DEFAULT: String(RATE) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const c = child;
    exited = new Promise((r) => c.once('exit', (code) => r(code)));
    await until('the start-up block', async () => stdout.includes(BLOCK_END) || (c.exitCode !== null && assert.fail(`start-cluster exited ${c.exitCode}:\n${stderr}`)), 120_000);
  });

  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(30_000)]);
    }
    // Whatever an assertion left behind is killed, then the directory goes.
    if (existsSync(join(dataDir, 'runtime.json'))) {
      const runtime = readRuntime();
      for (const p of runtime.cluster?.processes ?? []) if (p.pid && !isGone(p.pid)) process.kill(p.pid, 'SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the block of npm start plus one line per process, and answers /readyz on PORT', async () => {
    const lines = stdout.split('\n');
    const runtime = readRuntime();
    assert.match(lines[0]!, /^Faktura API is running \(started in \d+\.\d s\)$/);
    assert.equal(lines[1], `  API        http://127.0.0.1:${port}/v1`);
    assert.equal(lines[2], `  Docs       http://127.0.0.1:${port}/docs`);
    assert.equal(lines[3], `  Pay page   http://127.0.0.1:${runtime.ports.pay}/`);
    assert.equal(lines[4], `  Restate UI http://127.0.0.1:${runtime.ports.restateAdmin}/ui/`);
    assert.equal(lines[5], `  Redis      redis://127.0.0.1:${runtime.ports.redis}`);
    // The document archive: its own radosgw on loopback, which every replica uses (DOCUMENT_STORE=s3).
    assert.match(lines[6]!, /^ {2}Documents {2}S3 archive with Object Lock at http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(lines[7]!, new RegExp(`^  Get a key  DATA_DIR=${JSON.stringify(dataDir).replace(/[/.]/g, '\\$&')} npm run admin -- create-org `));
    assert.equal(lines[8], `  Key        development key in ${join(dataDir, 'secrets', 'encryption.key')} (set DATA_ENCRYPTION_KEY in production)`);
    assert.equal(lines[9], `  Data       ${dataDir}   ${BLOCK_END}`);
    assert.equal(lines[10], `  Processes  (logs under ${join(dataDir, 'logs')})`);
    const processLines = lines.slice(11).filter((l) => l.startsWith('    '));
    assert.deepEqual(processLines.map((l) => l.trim().split(/\s+/)[0]), PROCESSES);
    for (const p of runtime.cluster!.processes) {
      const line = processLines.find((l) => l.trim().startsWith(`${p.name} `))!;
      assert.ok(line.includes(`pid ${p.pid}`), line);
      assert.ok(existsSync(p.logFile), p.logFile);
    }
    // Every replica serves its metrics on a port of its own: replica set i has one METRICS_PORT block (api, pay = + 1,
    // workflows = + 2), and the line names it.
    const replicas = runtime.cluster!.processes.filter((p) => p.kind === 'api' || p.kind === 'pay' || p.kind === 'workflows');
    assert.equal(new Set(replicas.map((p) => p.ports.metrics)).size, 6);
    for (const i of [1, 2]) {
      const of = (name: string) => runtime.cluster!.processes.find((p) => p.name === `${name}-${i}`)!.ports.metrics!;
      assert.deepEqual([of('pay') - of('api'), of('workflows') - of('api')], [1, 2]);
    }
    for (const p of replicas) {
      const line = processLines.find((l) => l.trim().startsWith(`${p.name} `))!;
      assert.ok(line.includes(`metrics http://127.0.0.1:${p.ports.metrics}/metrics`), line);
      const text = await (await fetch(`http://127.0.0.1:${p.ports.metrics}/metrics`)).text();
      assert.ok(text.includes(p.kind === 'workflows' ? 'faktura_wake_lag_seconds{service="Dunning"}' : `faktura_db_pool_size{pool="${p.kind}"}`), p.name);
    }
    assert.equal(stderr, '');
    assert.equal(runtime.status, 'running');
    assert.equal(runtime.apiUrl, `http://127.0.0.1:${port}`);

    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { postgres: 'ok', restate: 'ok' } });
    const payPage = await fetch(`http://127.0.0.1:${runtime.ports.pay}/`);
    assert.equal(payPage.status, 200);
    assert.match(await payPage.text(), /<label for="code">/);
  });

  it('runs Restate as one cluster of three live nodes with logs and partitions on two nodes each', async () => {
    const status = await restateClusterStatus(readRuntime().cluster!.restateFabric);
    assert.deepEqual(status.nodes.map((n) => [n.name, n.state, n.metadata]).sort(), [
      ['n1', 'alive', 'member'],
      ['n2', 'alive', 'member'],
      ['n3', 'alive', 'member'],
    ]);
    assert.ok(status.partitions.length > 0);
    for (const p of status.partitions) {
      assert.equal(new Set(p.replicas).size, REPLICATION, `partition ${p.id}: ${p.replicas.join(',')}`);
      assert.ok(p.leader && p.replicas.includes(p.leader), `partition ${p.id} has a leader among its replicas`);
    }
    for (const l of status.logs) assert.equal(l.replication, `{node: ${REPLICATION}}`, `log ${l.id}`);
    // Registered once, cluster-wide: one deployment, the URL of the proxy in front of both workflows processes.
    const runtime = readRuntime();
    const deployments = (await (await fetch(`${runtime.restateAdminUrl}/deployments`)).json()) as { deployments: { uri: string }[] };
    assert.deepEqual(deployments.deployments.map((d) => d.uri.replace(/\/$/, '')), [runtime.workflowsUrl]);
    for (const name of ['workflows-1', 'workflows-2']) {
      const log = readFileSync(join(dataDir, 'logs', `${name}.log`), 'utf8');
      assert.ok(log.includes(`"msg":"workflows endpoint listening","url":"${runtime.workflowsUrl}"`), `${name} registered the shared URL`);
      // Both verify Restate's signature (the key pair under DATA_DIR/secrets), so the SDK's warning is not printed.
      assert.doesNotMatch(log, /without validating request signatures/, name);
    }
    // Every node signs with the one private key and keeps completed journals 35 days by default.
    const pem = join(dataDir, 'secrets', 'restate-identity.pem');
    assert.equal(statSync(pem).mode & 0o777, 0o600);
    for (const n of ['n1', 'n2', 'n3']) {
      const toml = readFileSync(join(dataDir, 'cluster', 'restate', `${n}.toml`), 'utf8');
      assert.ok(toml.includes(`request-identity-private-key-pem-file = ${JSON.stringify(pem)}`), n);
      assert.ok(toml.includes('default-journal-retention = "35d"'), n);
    }
    assert.equal(await unsignedStatus(runtime.workflowsUrl, '/discover'), 401);
    const dunning = (await (await fetch(`${runtime.restateAdminUrl}/services/Dunning`)).json()) as { journal_retention: string };
    assert.equal(dunning.journal_retention, '35d');
  });

  it('spreads requests over both API replicas and carries a durable step through the workflows processes', async () => {
    const runtime = readRuntime();
    const stats = runtime.cluster!.proxyStats;
    const before = await readProxyStats(stats['edge-api']!);
    for (let i = 0; i < 10; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    const after = await readProxyStats(stats['edge-api']!);
    for (const name of ['api-1', 'api-2']) {
      const served = after.find((s) => s.server === name)!.total - before.find((s) => s.server === name)!.total;
      assert.ok(served >= 3, `${name} served ${served} of 10 requests`);
    }

    const db = new Db(createSql(runtime.databaseUrl, { max: 1 }), 1);
    try {
      const org = await db.tx((tx) =>
        createOrganization(tx, { name: 'Cluster ApS', cvr: '12345678', street: 'Testvej 1', postalCode: '8000', city: 'Aarhus C', sandbox: true }),
      );
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', 'idempotency-key': `cluster-${path}-${Date.now()}` },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as { data: { id: string } } };
      };
      const customer = await post('/v1/customers', { type: 'company', name: 'Kunde A/S', email: 'ap@kunde.dk' });
      assert.equal(customer.status, 201);
      const invoice = await post('/v1/invoices?send=true', { customerId: customer.body.data.id, lines: [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4500 }] });
      assert.equal(invoice.status, 201);
      // The mail step runs in a workflows process, reached by Restate through the private proxy.
      const mails = () => (existsSync(join(dataDir, 'mail')) ? readdirSync(join(dataDir, 'mail'), { recursive: true }).filter((f) => String(f).endsWith('.eml')) : []);
      await until('the invoice mail', async () => mails().length > 0, 30_000);
    } finally {
      await db.close();
    }
  });

  it('gives a key its rate across both API replicas together (the limits count in the one Redis)', async () => {
    const runtime = readRuntime();
    const db = new Db(createSql(runtime.databaseUrl, { max: 1 }), 1);
    let apiKey: string;
    try {
      apiKey = (await db.tx((tx) => createOrganization(tx, { name: 'Takt ApS', cvr: '12345678', street: 'Testvej 1', postalCode: '8000', city: 'Aarhus C', sandbox: true }))).apiKey;
    } finally {
      await db.close();
    }
    const before = await readProxyStats(runtime.cluster!.proxyStats['edge-api']!);
    const statuses = await Promise.all(
      Array.from({ length: 4 * RATE }, () => fetch(`http://127.0.0.1:${port}/v1/customers`, { headers: { authorization: `Bearer ${apiKey}` } }).then((r) => r.status)),
    );
    const after = await readProxyStats(runtime.cluster!.proxyStats['edge-api']!);
    for (const name of ['api-1', 'api-2']) {
      assert.ok(after.find((x) => x.server === name)!.total > before.find((x) => x.server === name)!.total, `${name} took some of them`);
    }
    // The burst (2 × RATE) and what refilled meanwhile, not a burst per replica.
    const ok = statuses.filter((x) => x === 200).length;
    assert.ok(ok >= 2 * RATE && ok <= 2 * RATE + 2, `${ok} of ${statuses.length} answered 200: ${statuses.join(',')}`);
    assert.equal(statuses.filter((x) => x === 429).length, statuses.length - ok);
  });

  it('keeps answering through the proxy when an API replica is killed, and says which one went', async () => {
    const runtime = readRuntime();
    const api1 = runtime.cluster!.processes.find((p) => p.name === 'api-1')!;
    const inFlight = Array.from({ length: 10 }, () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 'failed'));
    process.kill(api1.pid!, 'SIGKILL');
    // Reads that were under way as it died are answered by api-2 (a dropped read is sent again).
    assert.deepEqual(await Promise.all(inFlight), Array(10).fill(200));
    await until('api-1 refuses connections', async () => isGone(api1.pid!) && !(await tcpOpen(api1.ports.port!)));
    // At once, before a health check has seen it: a refused connection is retried on api-2.
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200, `request ${i} after the kill`);
    const stats = await until('api-1 marked down', async () => {
      const s = await readProxyStats(runtime.cluster!.proxyStats['edge-api']!);
      return s.find((x) => x.server === 'api-1')!.status.startsWith('DOWN') && s;
    });
    assert.ok(stats.find((x) => x.server === 'api-2')!.status.startsWith('UP'));
    await until('the warning', async () => stderr.includes('warning: api-1 exited unexpectedly (SIGKILL)'));
    assert.match(stderr, /The others carry on \(1 api left\)\./);
    assert.equal(child!.exitCode, null, 'start-cluster still runs');
  });

  it('stops everything on SIGTERM and exits 0', async () => {
    const runtime = readRuntime();
    const t0 = performance.now();
    child!.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    const ms = performance.now() - t0;
    assert.ok(ms < 25_000, `stop took ${Math.round(ms)} ms`);
    assert.match(stdout, /Faktura API stopped\.\n$/);
    for (const p of runtime.cluster!.processes) if (p.pid) assert.ok(isGone(p.pid), `${p.name} (pid ${p.pid}) still runs`);
    assert.equal(readRuntime().status, 'stopped');
  });
});

/** The status a request without Restate's signature gets from the workflows endpoints (HTTP/2 without TLS, through their proxy). */
function unsignedStatus(url: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on('error', reject);
    const req = session.request({ ':method': 'GET', ':path': path });
    req.on('response', (headers) => {
      resolve(Number(headers[':status']));
      req.resume();
      req.on('end', () => session.close());
    });
    req.on('error', reject);
    req.end();
  });
}
