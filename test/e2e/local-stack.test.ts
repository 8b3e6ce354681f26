import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as http2 from 'node:http2';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../../deploy/local/ports.ts';
import type { RuntimeInfo } from '../../deploy/local/runtime-file.ts';
import { createFakturaClient } from '../../clients/typescript/index.ts';

const NODE = 'node_modules/.bin/node';
const BLOCK_END = '(Ctrl-C stops everything)';

interface Stack {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** A process that has exited, or only waits to be reaped, no longer runs. */
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

describe('npm start: the whole stack on one machine', function () {
  this.timeout(90_000);
  let dataDir: string;
  let port: number;
  const started: Stack[] = [];

  const dirs: string[] = [];
  // Only what a fresh clone has: no DATABASE_URL, no Restate URLs, no key.
  const env = (dir = dataDir, p = port) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', DATA_DIR: dir, PORT: String(p) });

  function spawnStack(dir = dataDir, p = port): Stack {
    const child = spawn(NODE, ['deploy/local/start.ts'], { env: env(dir, p), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errText = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const stack: Stack = { child, stdout: () => out, stderr: () => errText, exited };
    started.push(stack);
    return stack;
  }

  /** Resolves once the start-up block is on stdout. */
  function startStack(dir = dataDir, p = port): Promise<Stack> {
    const stack = spawnStack(dir, p);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start-up block after 45 s; stderr:\n${stack.stderr()}`)), 45_000);
      const onData = () => {
        if (!stack.stdout().includes(BLOCK_END)) return;
        clearTimeout(timer);
        stack.child.stdout?.removeListener('data', onData);
        resolve(stack);
      };
      stack.child.stdout?.on('data', onData);
      void stack.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`start.ts exited with ${code} before it was ready; stderr:\n${stack.stderr()}`));
      });
    });
  }

  async function stopStack(stack: Stack): Promise<{ code: number | null; ms: number }> {
    const t0 = performance.now();
    stack.child.kill('SIGTERM');
    const code = await stack.exited;
    return { code, ms: performance.now() - t0 };
  }

  const readRuntime = (dir = dataDir): RuntimeInfo => JSON.parse(readFileSync(join(dir, 'runtime.json'), 'utf8')) as RuntimeInfo;
  const api = (path: string, key?: string, p = port) =>
    fetch(`http://127.0.0.1:${p}${path}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});

  function createOrg(): Promise<{ organizationId: string; apiKey: string }> {
    return new Promise((resolve, reject) => {
      const cli = spawn(NODE, [
        'services/admin/cli.ts', 'create-org', '--name', 'Stack Test ApS', '--cvr', '12345678', '--street', 'Testvej 1', '--postal-code', '8000',
        '--city', 'Aarhus C', '--sandbox', '--json',
      ], {
        env: env(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let errText = '';
      cli.stdout.on('data', (d: Buffer) => (out += d.toString()));
      cli.stderr.on('data', (d: Buffer) => (errText += d.toString()));
      cli.once('exit', (code) =>
        code === 0 ? resolve(JSON.parse(out) as { organizationId: string; apiKey: string }) : reject(new Error(`create-org exited ${code}: ${errText}`)),
      );
    });
  }

  const newDataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'faktura-e2e-'));
    dirs.push(dir);
    return dir;
  };

  before(async () => {
    dataDir = newDataDir();
    port = await freePort();
  });

  after(async () => {
    // A failed assertion must not leave the stack running.
    for (const s of started) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM');
        await Promise.race([s.exited, new Promise((r) => setTimeout(r, 10_000))]);
      }
    }
    for (const dir of dirs) {
      const last = existsSync(join(dir, 'runtime.json')) ? readRuntime(dir) : undefined;
      for (const pid of [last?.pids.postgres, last?.pids.restateServer, last?.pids.redisServer]) {
        if (pid && !isGone(pid)) process.kill(pid, 'SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts from nothing, serves, stops cleanly on SIGTERM, and starts again on the same data', async () => {
    const first = await startStack();

    const lines = first.stdout().split('\n');
    assert.match(lines[0]!, /^Faktura API is running \(started in \d+\.\d s\)$/);
    assert.equal(lines[1], `  API        http://127.0.0.1:${port}/v1`);
    assert.equal(lines[2], `  Docs       http://127.0.0.1:${port}/docs`);
    const runtime = readRuntime();
    assert.equal(lines[3], `  Pay page   http://127.0.0.1:${runtime.ports.pay}/`);
    assert.equal(lines[4], `  Restate UI http://127.0.0.1:${runtime.ports.restateAdmin}/ui/`);
    assert.equal(lines[5], `  Redis      redis://127.0.0.1:${runtime.ports.redis}`);
    assert.equal(lines[6], `  Metrics    http://127.0.0.1:${runtime.ports.metrics}/metrics`);
    assert.equal(
      lines[7],
      `  Get a key  DATA_DIR=${JSON.stringify(dataDir)} npm run admin -- create-org --name "My Company" --cvr 12345678 --street "Nørregade 1" ` +
        '--postal-code 8000 --city "Aarhus C" --sandbox --json',
    );
    assert.equal(lines[8], `  Key        development key in ${join(dataDir, 'secrets', 'encryption.key')} (set DATA_ENCRYPTION_KEY in production)`);
    assert.equal(lines[9], `  Data       ${dataDir}   ${BLOCK_END}`);
    assert.equal(first.stderr(), '');

    // One process, one registry: the one metrics listener serves the API's, the pay page's and the workflows' series.
    const metrics = await fetch(`http://127.0.0.1:${runtime.ports.metrics}/metrics`);
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    for (const series of ['faktura_wake_lag_seconds{service="Dunning"}', 'faktura_db_pool_size{pool="api"}', 'faktura_db_pool_size{pool="pay"}', 'faktura_db_pool_size{pool="workflows"}']) {
      assert.ok(text.includes(series), series);
    }
    assert.equal((await api('/metrics')).status, 404);

    const health = await api('/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const ready = await api('/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { postgres: 'ok', restate: 'ok' } });

    const { ports, pids } = runtime;
    assert.deepEqual(Object.keys(ports).sort(), ['api', 'metrics', 'pay', 'postgres', 'redis', 'restateAdmin', 'restateFabric', 'restateIngress', 'workflows']);
    assert.equal(ports.api, port);
    assert.equal(new Set(Object.values(ports)).size, 9);
    assert.deepEqual(
      { ...runtime, startedAt: 'checked below', pids: 'checked below' },
      {
        status: 'running',
        dataDir,
        databaseUrl: `postgres://postgres:postgres@127.0.0.1:${ports.postgres}/faktura`,
        restateIngressUrl: `http://127.0.0.1:${ports.restateIngress}`,
        restateAdminUrl: `http://127.0.0.1:${ports.restateAdmin}`,
        workflowsUrl: `http://127.0.0.1:${ports.workflows}`,
        redisUrl: `redis://127.0.0.1:${ports.redis}`,
        apiUrl: `http://127.0.0.1:${port}`,
        payUrl: `http://127.0.0.1:${ports.pay}`,
        ports,
        pid: first.child.pid,
        pids: 'checked below',
        startedAt: 'checked below',
        stoppedAt: null,
      },
    );
    assert.ok(Math.abs(Date.parse(runtime.startedAt) - Date.now()) < 60_000);
    assert.ok(pids.postgres && !isGone(pids.postgres));
    assert.ok(pids.restateServer && !isGone(pids.restateServer));
    assert.ok(pids.redisServer && !isGone(pids.redisServer));
    assert.equal(statSync(join(dataDir, 'runtime.json')).mode & 0o777, 0o600);
    const keyFile = join(dataDir, 'secrets', 'encryption.key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    const devKey = readFileSync(keyFile, 'utf8');
    assert.ok(existsSync(join(dataDir, 'logs', 'postgres.log')));
    assert.ok(existsSync(join(dataDir, 'logs', 'restate.log')));
    assert.ok(existsSync(join(dataDir, 'logs', 'redis.log')));
    // restate-server signs its requests to the workflows endpoint with the key pair kept here; the endpoint serves no
    // request without that signature.
    assert.equal(statSync(join(dataDir, 'secrets', 'restate-identity.pem')).mode & 0o777, 0o600);
    assert.equal(await unsignedStatus(`http://127.0.0.1:${ports.workflows}`, '/discover'), 401);

    const payPage = await fetch(`http://127.0.0.1:${ports.pay}/`);
    assert.equal(payPage.status, 200);
    assert.match(await payPage.text(), /<label for="code">/);

    const org = await createOrg();
    // The /v1 routes through the typed client (clients/typescript), as an integrator calls them.
    const client = createFakturaClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: org.apiKey });
    const discovery = await client.GET('/v1');
    assert.equal(discovery.response.status, 200);
    assert.equal(discovery.data?.data.organizationId, org.organizationId);
    const customer = await client.POST('/v1/customers', {
      params: { header: { 'idempotency-key': 'e2e-stack-customer-1' } },
      body: { type: 'company', name: 'Kunde A/S', externalReference: 'crm-4711' },
    });
    assert.equal(customer.response.status, 201, JSON.stringify(customer.error));
    const found = await client.GET('/v1/customers', { params: { query: { externalReference: 'crm-4711' } } });
    assert.deepEqual(found.data?.data.map((c) => c.id), [customer.data?.data.id]);
    // The document the stack serves names the stack's own address as its server (PUBLIC_API_URL defaults to it).
    const served = (await (await api('/v1/openapi.json')).json()) as { servers: unknown };
    assert.deepEqual(served.servers, [{ url: `http://127.0.0.1:${port}`, description: 'This API' }]);

    // A client that sent half a request and went quiet does not hold the stop (its connection is cut after a grace).
    const stalled = connect(port, '127.0.0.1');
    await new Promise<void>((r) => stalled.once('connect', () => r()));
    stalled.write('POST /v1/customers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"type"');
    stalled.on('error', () => {});
    const stopped = await stopStack(first);
    stalled.destroy();
    assert.equal(stopped.code, 0, first.stdout().slice(-3000) + first.stderr());
    assert.ok(stopped.ms < 10_000, `stop took ${Math.round(stopped.ms)} ms`);
    assert.ok(isGone(pids.postgres), 'PostgreSQL still runs');
    assert.ok(isGone(pids.restateServer), 'restate-server still runs');
    assert.ok(isGone(pids.redisServer), 'redis-server still runs');
    const afterStop = readRuntime();
    assert.equal(afterStop.status, 'stopped');
    assert.ok(afterStop.stoppedAt && Date.parse(afterStop.stoppedAt) >= Date.parse(afterStop.startedAt));
    assert.match(first.stdout(), /Faktura API stopped\.\n$/);
    // The endpoint verifies signatures, so the Restate SDK's warning about accepting unsigned requests is not printed.
    assert.doesNotMatch(first.stdout(), /without validating request signatures/);

    // Second start on the same DATA_DIR: the data, the key and the ports of the first.
    const second = await startStack();
    const again = readRuntime();
    assert.equal(again.status, 'running');
    assert.equal(again.pid, second.child.pid);
    assert.deepEqual(again.ports, ports);
    assert.equal(readFileSync(keyFile, 'utf8'), devKey);
    const readyAgain = await api('/readyz');
    assert.equal(readyAgain.status, 200);
    const discoveryAgain = await client.GET('/v1');
    assert.equal(discoveryAgain.response.status, 200);
    assert.equal(discoveryAgain.data?.data.organizationId, org.organizationId);

    const stoppedAgain = await stopStack(second);
    assert.equal(stoppedAgain.code, 0);
    assert.ok(stoppedAgain.ms < 10_000, `stop took ${Math.round(stoppedAgain.ms)} ms`);
    assert.ok(isGone(again.pids.postgres!) && isGone(again.pids.restateServer!) && isGone(again.pids.redisServer!));
  });

  it('runs two stacks side by side on different DATA_DIR and PORT, and refuses a second start on a DATA_DIR in use', async () => {
    const [dirA, dirB] = [newDataDir(), newDataDir()];
    // One after the other, each PORT chosen when the stack before it is up: a start takes free ports from the kernel
    // and binds them moments later, so a port handed out (to a start at the same instant, or as the next stack's PORT)
    // but not yet bound can be handed out again (seen once: EADDRINUSE). Side by side is what is tested.
    const portA = await freePort();
    const a = await startStack(dirA, portA);
    const portB = await freePort();
    const b = await startStack(dirB, portB);
    for (const p of [portA, portB]) {
      const ready = await api('/readyz', undefined, p);
      assert.equal(ready.status, 200);
    }
    const [ra, rb] = [readRuntime(dirA), readRuntime(dirB)];
    assert.equal(new Set([...Object.values(ra.ports), ...Object.values(rb.ports)]).size, 18);

    const clash = spawnStack(dirA, await freePort());
    assert.equal(await clash.exited, 1);
    assert.equal(clash.stderr(), `error: the service already runs on ${dirA} (pid ${a.child.pid}); stop it first, or use another DATA_DIR.\n`);
    assert.equal(clash.stdout(), '');

    const [sa, sb] = await Promise.all([stopStack(a), stopStack(b)]);
    assert.deepEqual([sa.code, sb.code], [0, 0]);
    for (const r of [ra, rb]) assert.ok(isGone(r.pids.postgres!) && isGone(r.pids.restateServer!) && isGone(r.pids.redisServer!));
  });

  /** Starts a stack, signals one of its servers as if it died on its own, and waits for the start to exit. */
  async function startAndKill(part: 'postgres' | 'restateServer' | 'redisServer', signal: NodeJS.Signals) {
    const dir = newDataDir();
    const p = await freePort();
    const stack = await startStack(dir, p);
    const before = readRuntime(dir);
    process.kill(before.pids[part]!, signal);
    const code = await Promise.race([stack.exited, new Promise((r) => setTimeout(() => r('still running after 20 s'), 20_000))]);
    return { dir, p, stack, before, code };
  }

  it('runs neither server in the process group of the start, which a terminal’s Ctrl-C signals as a whole', async () => {
    // The stop that lets requests in flight finish must not find PostgreSQL already shutting down.
    const dir = newDataDir();
    const stack = await startStack(dir, await freePort());
    const { pids } = readRuntime(dir);
    const group = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2];
    assert.notEqual(group(pids.postgres!), group(stack.child.pid!));
    assert.notEqual(group(pids.restateServer!), group(stack.child.pid!));
    assert.notEqual(group(pids.redisServer!), group(stack.child.pid!));
    assert.equal((await stopStack(stack)).code, 0);
  });

  it('stops everything with exit code 1 and one line naming the part when restate-server dies under it', async () => {
    const { dir, p, stack, before, code } = await startAndKill('restateServer', 'SIGKILL');
    assert.equal(code, 1, stack.stderr());
    assert.match(stack.stderr(), /^error: restate-server exited unexpectedly \(SIGKILL\); its log: \S+restate\.log\. Stopping everything\.$/m);
    assert.match(stack.stdout(), /Faktura API stopped, not cleanly\.\n$/);
    assert.ok(isGone(before.pids.postgres!), 'PostgreSQL was stopped with the rest');
    assert.equal(readRuntime(dir).status, 'stopped');
    assert.equal((await api('/healthz', undefined, p).catch(() => undefined))?.status, undefined, 'the API no longer answers');
  });

  it('stops everything with exit code 1 and one line naming the part when its redis-server dies under it', async () => {
    const { stack, before, code } = await startAndKill('redisServer', 'SIGKILL');
    assert.equal(code, 1, stack.stderr());
    assert.match(stack.stderr(), /^error: redis-server exited unexpectedly \(SIGKILL\); its log: \S+redis\.log\. Stopping everything\.$/m);
    assert.ok(isGone(before.pids.postgres!) && isGone(before.pids.restateServer!), 'the rest was stopped with it');
  });

  it('stops everything with exit code 1 when PostgreSQL dies under it, and starts again on the same data', async () => {
    const { dir, p, stack, before, code } = await startAndKill('postgres', 'SIGQUIT'); // immediate shutdown, as after a crash
    assert.equal(code, 1, stack.stderr());
    assert.match(stack.stderr(), /^error: PostgreSQL exited unexpectedly \(exit code \d+\); its log: \S+postgres\.log\. Stopping everything\.$/m);
    assert.ok(isGone(before.pids.restateServer!), 'restate-server was stopped with the rest');
    const again = await startStack(dir, p);
    assert.equal((await api('/readyz', undefined, p)).status, 200);
    assert.equal((await stopStack(again)).code, 0);
  });

  /** A start that is expected to fail before starting anything: its exit code and output. */
  async function failedStart(extraEnv: NodeJS.ProcessEnv): Promise<{ dir: string; code: number | null; out: string; errText: string }> {
    const dir = newDataDir();
    const child = spawn(NODE, ['deploy/local/start.ts'], { env: { ...env(dir, await freePort()), ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errText = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    return { dir, code, out, errText };
  }

  it('refuses a setting it cannot read with one line on stderr, before starting anything', async () => {
    const { dir, code, out, errText } = await failedStart({ PORT: 'abc' });
    assert.equal(code, 1);
    assert.equal(out, '');
    assert.equal(errText, 'error: PORT must be a non-negative integer, got "abc"\n');
    assert.equal(existsSync(join(dir, 'postgres')), false);
  });

  it('refuses to start in production without DATA_ENCRYPTION_KEY, before starting anything', async () => {
    const { dir, code, out, errText } = await failedStart({ NODE_ENV: 'production' });
    assert.equal(code, 1);
    assert.equal(out, '');
    assert.equal(errText, 'error: DATA_ENCRYPTION_KEY is required when NODE_ENV=production (32 bytes as 64 hex characters or base64).\n');
    assert.equal(existsSync(join(dir, 'secrets')), false);
    assert.equal(existsSync(join(dir, 'postgres')), false);
  });
});

/** The status a request without Restate's signature gets from a workflows endpoint (HTTP/2 without TLS). */
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
