import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { freePort, isPortFree } from '../../deploy/local/ports.ts';
import { createTestOrg, TEST_MASTER_KEY, testDb, type TestOrg } from '../helpers/context.ts';
import { ROOT } from '../helpers/scripts.ts';

/**
 * The three processes as production runs them (`services/api/main.ts`, `services/pay/main.ts`, `workflows/main.ts`),
 * each with the metrics listener its entry point opens: METRICS_PORT for the API, + 1 for the pay service, + 2 for the
 * workflows process. The test scrapes them as Prometheus does and reads the samples back.
 */

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of Prometheus' text format (one per line; comments and blank lines aside). */
function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample `name` with exactly these labels among its own (others may be present); 0 when absent. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string>): number {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(hits.length <= 1, `${name} ${JSON.stringify(labels)} matches ${hits.length} samples`);
  return hits[0]?.value ?? 0;
}

async function scrape(port: number): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parseSamples(await res.text());
}

/** Three consecutive free loopback ports: one METRICS_PORT for the three processes. */
async function freeBlock(): Promise<number> {
  for (;;) {
    const base = await freePort();
    if (base + 2 <= 65_535 && (await isPortFree(base + 1)) && (await isPortFree(base + 2))) return base;
  }
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe('metrics: each process serves its own series on a listener of its own', function () {
  this.timeout(90_000);
  const children: ChildProcess[] = [];
  const output: string[] = [];
  let metricsBase: number;
  let apiPort: number;
  let payPort: number;
  let org: TestOrg;
  let customerId: string;
  const ports = () => ({ api: metricsBase, pay: metricsBase + 1, workflows: metricsBase + 2 });
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${apiPort}${path}`, { ...init, headers: { Authorization: `Bearer ${org.apiKey}`, ...(init.headers ?? {}) } });

  function start(script: string, env: Record<string, string>): void {
    const child = spawn(join(ROOT, 'node_modules/.bin/node'), [script], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        DATABASE_URL: process.env.TEST_DATABASE_URL!,
        DATA_ENCRYPTION_KEY: TEST_MASTER_KEY.toString('hex'),
        METRICS_PORT: String(metricsBase),
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    child.stdout.on('data', (d: Buffer) => output.push(`${script}: ${d.toString()}`));
    child.stderr.on('data', (d: Buffer) => output.push(`${script}: ${d.toString()}`));
  }

  async function answers(url: string): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await fetch(url).then((r) => r.ok, () => false);
      if (ok) return;
      if (Date.now() > deadline || children.some((c) => c.exitCode !== null)) assert.fail(`${url} did not answer:\n${output.join('')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  before(async () => {
    org = await createTestOrg();
    metricsBase = await freeBlock();
    apiPort = await freePort();
    payPort = await freePort();
    start('services/api/main.ts', { HOST: '127.0.0.1', PORT: String(apiPort), RATE_LIMIT_DEFAULT: '0', RATE_LIMIT_DOCUMENT: '0' });
    start('services/pay/main.ts', { PAY_HOST: '127.0.0.1', PAY_PORT: String(payPort) });
    start('workflows/main.ts', { WORKFLOWS_HOST: '127.0.0.1' });
    await Promise.all([
      answers(`http://127.0.0.1:${apiPort}/healthz`),
      answers(`http://127.0.0.1:${payPort}/healthz`),
      ...Object.values(ports()).map((p) => answers(`http://127.0.0.1:${p}/metrics`)),
    ]);
    const created = await api('/v1/customers', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `metrics-${randomUUID()}` },
      body: JSON.stringify({ type: 'company', name: 'Metrik A/S', email: 'bogholderi@metrik.dk' }),
    });
    assert.equal(created.status, 201, await created.clone().text());
    customerId = ((await created.json()) as { data: { id: string } }).data.id;
  });

  after(async () => {
    await Promise.all(
      children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await exited;
      }),
    );
    await testDb().db.read((sql) => sql`DELETE FROM wake_index WHERE organization_id = ${org.organizationId}`);
  });

  it('one GET /v1/customers/{id} adds exactly one to route /v1/customers/:customerId, 2xx; an unknown id one to 4xx', async () => {
    // The route's template as Fastify has it (request.routeOptions.url), never the path that was asked for.
    const route = { app: 'api', method: 'GET', route: '/v1/customers/:customerId' };
    const before = await scrape(ports().api);
    assert.equal((await api(`/v1/customers/${customerId}`)).status, 200);
    assert.equal((await api(`/v1/customers/${randomUUID()}`)).status, 404);
    const after = await scrape(ports().api);
    for (const [status, delta] of [['2xx', 1], ['4xx', 1], ['5xx', 0]] as const) {
      const labels = { ...route, status_class: status };
      assert.equal(valueOf(after, 'faktura_http_request_duration_seconds_count', labels) - valueOf(before, 'faktura_http_request_duration_seconds_count', labels), delta, status);
      assert.equal(valueOf(after, 'faktura_http_requests_total', labels) - valueOf(before, 'faktura_http_requests_total', labels), delta, status);
    }
    // The request took more than nothing, and landed in the histogram's buckets.
    const sum = (s: Sample[]) => valueOf(s, 'faktura_http_request_duration_seconds_sum', { ...route, status_class: '2xx' });
    assert.ok(sum(after) > sum(before));
    assert.equal(valueOf(after, 'faktura_http_request_duration_seconds_bucket', { ...route, status_class: '2xx', le: '+Inf' }), valueOf(after, 'faktura_http_request_duration_seconds_count', { ...route, status_class: '2xx' }));
  });

  it('the pay process counts its own requests under app="pay"; the API process has none of them', async () => {
    const labels = { app: 'pay', method: 'GET', route: '/healthz', status_class: '2xx' };
    const before = await scrape(ports().pay);
    assert.equal((await fetch(`http://127.0.0.1:${payPort}/healthz`)).status, 200);
    const after = await scrape(ports().pay);
    assert.equal(valueOf(after, 'faktura_http_requests_total', labels) - valueOf(before, 'faktura_http_requests_total', labels), 1);
    assert.equal((await scrape(ports().api)).filter((s) => s.labels.app === 'pay').length, 0);
  });

  it('each process reports its own PostgreSQL pool: size, connections in use and requests waiting', async () => {
    const [a, p, w] = await Promise.all([scrape(ports().api), scrape(ports().pay), scrape(ports().workflows)]);
    // DB_POOL_MAX (10) for the API, at most 5 for the pay and workflows processes.
    assert.equal(valueOf(a, 'faktura_db_pool_size', { pool: 'api' }), 10);
    assert.equal(valueOf(p, 'faktura_db_pool_size', { pool: 'pay' }), 5);
    assert.equal(valueOf(w, 'faktura_db_pool_size', { pool: 'workflows' }), 5);
    for (const [samples, pool] of [[a, 'api'], [p, 'pay'], [w, 'workflows']] as const) {
      assert.equal(samples.filter((s) => s.name === 'faktura_db_pool_size').length, 1, pool);
      // Idle while scraped: nothing holds a connection or waits for one.
      assert.equal(valueOf(samples, 'faktura_db_pool_connections_in_use', { pool }), 0);
      assert.equal(valueOf(samples, 'faktura_db_pool_waiting', { pool }), 0);
    }
    // Node's own figures come with every process.
    assert.ok(a.some((s) => s.name === 'process_resident_memory_bytes'));
  });

  it('the workflows process serves the wake lag (at least the oldest due row\'s age) and the parked work exactly', async () => {
    const { db } = testDb();
    const before = await scrape(ports().workflows);
    const parkedBefore = valueOf(before, 'faktura_parked_work', { service: 'PortalSignInMail' });
    await db.read((sql) => sql`
      INSERT INTO wake_index (service, handler, key, organization_id, due_at, parked_at, last_error) VALUES
        ('SubscriptionSchedule', 'wake', ${`metrics-due-${randomUUID()}`}, ${org.organizationId}, now() - interval '1 hour', NULL, NULL),
        ('PortalSignInMail', 'deliver', ${`metrics-parked-${randomUUID()}`}, ${org.organizationId}, now() - interval '2 days', now(), 'given up'),
        ('PortalSignInMail', 'deliver', ${`metrics-parked-${randomUUID()}`}, ${org.organizationId}, now() - interval '2 days', now(), 'given up')`);
    const after = await scrape(ports().workflows);
    assert.ok(valueOf(after, 'faktura_wake_lag_seconds', { service: 'SubscriptionSchedule' }) >= 3600);
    assert.equal(valueOf(after, 'faktura_parked_work', { service: 'PortalSignInMail' }), parkedBefore + 2);
    // Every service of the wake index has both series, also with nothing due or parked.
    for (const name of ['faktura_wake_lag_seconds', 'faktura_parked_work']) {
      assert.deepEqual(
        after.filter((s) => s.name === name).map((s) => s.labels.service).sort(),
        ['Case', 'Dunning', 'EventOutbox', 'InvoiceIssue', 'InvoiceMail', 'PastDue', 'PaymentReceipt', 'PortalSignInMail', 'SubscriptionSchedule', 'WebhookDelivery'],
      );
    }
    // Served by the workflows process only.
    assert.equal((await scrape(ports().api)).filter((s) => s.name === 'faktura_wake_lag_seconds').length, 0);
  });

  it('no label value carries an id, a key or an e-mail address, whatever the requests\' paths held', async () => {
    const email = 'debitor@example.dk';
    await api(`/v1/customers/${email}`);
    await api(`/v1/customers/${randomUUID()}/balance`);
    await api(`/v1/no-such-resource/${randomUUID()}?email=${email}`);
    await fetch(`http://127.0.0.1:${apiPort}/${org.apiKey}/${email}`);
    await fetch(`http://127.0.0.1:${payPort}/p/${randomUUID()}`);
    await fetch(`http://127.0.0.1:${payPort}/${email}/${randomUUID()}`);
    const all = (await Promise.all(Object.values(ports()).map(scrape))).flat();
    assert.ok(all.some((s) => s.labels.route === 'unmatched'), 'an unknown path counts under route="unmatched"');
    for (const s of all) {
      for (const [k, v] of Object.entries(s.labels)) {
        assert.doesNotMatch(v, UUID, `${s.name} ${k}="${v}"`);
        assert.ok(!v.includes('@'), `${s.name} ${k}="${v}"`);
        assert.ok(!v.includes('sk_'), `${s.name} ${k}="${v}"`);
      }
    }
  });

  it('the public ports serve no metrics, and the metrics listener serves nothing else', async () => {
    assert.equal((await fetch(`http://127.0.0.1:${apiPort}/metrics`)).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${payPort}/metrics`)).status, 404);
    for (const port of Object.values(ports())) {
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 404);
      assert.equal((await fetch(`http://127.0.0.1:${port}/v1/customers/${customerId}`, { headers: { Authorization: `Bearer ${org.apiKey}` } })).status, 404);
      assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status, 404);
    }
  });

  it('a metrics port in use stops the start with a message naming METRICS_PORT', async () => {
    // The API process's port is the running one's: taken.
    const child = spawn(join(ROOT, 'node_modules/.bin/node'), ['services/api/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        DATABASE_URL: process.env.TEST_DATABASE_URL!,
        DATA_ENCRYPTION_KEY: TEST_MASTER_KEY.toString('hex'),
        PORT: String(await freePort()),
        METRICS_PORT: String(metricsBase),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 1);
    assert.equal(stderr, `error: the metrics port 127.0.0.1:${metricsBase} is in use (METRICS_PORT)\n`);
  });
});
