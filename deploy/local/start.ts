/**
 * `npm start`: the whole service on one machine, with no configuration on a fresh clone.
 *
 * PostgreSQL (embedded, under DATA_DIR/postgres, unless DATABASE_URL is set), migrations, restate-server (under
 * DATA_DIR/restate, unless RESTATE_INGRESS_URL and RESTATE_ADMIN_URL are both set), redis-server (the shared limiter
 * store, under DATA_DIR/redis, unless REDIS_URL is set), the workflows endpoint, the API and the pay page in this
 * process. Ctrl-C or SIGTERM stops all of it, in reverse order, and exits 0. Data stays in DATA_DIR, so
 * the next start carries on where this one stopped; DATA_DIR/runtime.json says where everything runs.
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { startApi, type RunningApi } from '../../services/api/main.ts';
import { startPay, type RunningPay } from '../../services/pay/main.ts';
import { migrate } from '../../services/db/migrate.ts';
import { callableHost, DEFAULT_METRICS_PORT, metricsPort, payBaseUrl, readConfig, type Config } from '../../services/shared/config.ts';
import { startMetricsListener, type MetricsListener } from '../../services/observability/metrics.ts';
import { createKeyring } from '../../services/shared/crypto.ts';
import { createSql } from '../../services/shared/db.ts';
import { resolveMasterKey, type MasterKey } from '../../services/shared/dev-secrets.ts';
import { readOrCreateRequestIdentity } from '../../services/shared/request-identity.ts';
import { runWorkflows, type RunningWorkflows } from '../../workflows/main.ts';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedPg } from './embedded-postgres.ts';
import { preferPort } from './ports.ts';
import { startRestateServer, type ChildExit, type RestateServer } from './restate-server.ts';
import { startOtlpGrpcRelay, type OtlpGrpcRelay } from './otlp-grpc-relay.ts';
import { startRedis, type RunningRedis } from './redis-server.ts';
import { readRuntimeFile, rememberedPort, writeRuntimeFile, type RuntimeInfo } from './runtime-file.ts';

const DATABASE = 'faktura';
const DEFAULT_DATA_DIR = '.data';
/** The stop must end within 10 s; past this, whatever still runs is killed. */
const STOP_DEADLINE_MS = 9000;

const out = (line: string) => void process.stdout.write(`${line}\n`);
const err = (line: string) => void process.stderr.write(`${line}\n`);

/** True when `pid` runs and, where /proc can tell, its command line mentions `marker` (pids get reused). */
function isRunning(pid: number | null | undefined, marker: string): pid is number {
  if (typeof pid !== 'number' || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
  } catch {
    return !existsSync('/proc');
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitGone(pid: number, marker: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (isRunning(pid, marker)) {
    if (Date.now() > until) return false;
    await sleep(50);
  }
  return true;
}

/**
 * A start that was killed outright (SIGKILL, a crash) leaves its children running, and they hold the data
 * directories. They were started by an earlier run of this command, on this DATA_DIR, so they are stopped here.
 */
async function stopLeftovers(previous: Partial<RuntimeInfo> | undefined): Promise<void> {
  const pg = previous?.pids?.postgres;
  if (isRunning(pg, 'postgres')) {
    err(`Stopping PostgreSQL (pid ${pg}) left running by an earlier start…`);
    process.kill(pg, 'SIGINT'); // fast shutdown: its clients died with the earlier start
    if (!(await waitGone(pg, 'postgres', 10_000))) throw new Error(`PostgreSQL (pid ${pg}) does not stop; stop it, then start again`);
  }
  const rs = previous?.pids?.restateServer;
  if (isRunning(rs, 'restate-server')) {
    err(`Stopping restate-server (pid ${rs}) left running by an earlier start…`);
    process.kill(rs, 'SIGTERM');
    if (!(await waitGone(rs, 'restate-server', 5000))) process.kill(rs, 'SIGKILL');
    await waitGone(rs, 'restate-server', 2000);
  }
  const redis = previous?.pids?.redisServer;
  if (isRunning(redis, 'redis-server')) {
    err(`Stopping redis-server (pid ${redis}) left running by an earlier start…`);
    process.kill(redis, 'SIGTERM');
    if (!(await waitGone(redis, 'redis-server', 3000))) process.kill(redis, 'SIGKILL');
    await waitGone(redis, 'redis-server', 2000);
  }
}

/** Holds the API's and the endpoint's log lines until the start-up block is printed, then passes them to stdout. */
class HeldStdout extends Writable {
  private held: Buffer[] | undefined = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (error?: Error | null) => void): void {
    if (this.held) {
      this.held.push(chunk);
      cb();
    } else {
      process.stdout.write(chunk, () => cb());
    }
  }
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const chunk of held) process.stdout.write(chunk);
  }
}

interface Parts {
  pg?: EmbeddedPg;
  pgPid?: number | null;
  restate?: RestateServer;
  /** restate-server's traces, from its OTLP/gRPC export to OTEL_EXPORTER_OTLP_ENDPOINT. */
  traceRelay?: OtlpGrpcRelay;
  redis?: RunningRedis;
  workflows?: RunningWorkflows;
  api?: RunningApi;
  pay?: RunningPay;
  metrics?: MetricsListener;
  pgLog?: WriteStream;
}

/** Reverse order of start: nothing is left talking to a part that is already gone. */
async function stopParts(parts: Parts): Promise<void> {
  const problems: string[] = [];
  const attempt = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (e) {
      problems.push(`${what}: ${(e as Error).message}`);
    }
  };
  // The two HTTP front ends together: each may sit out its grace period for a stalled client (closeServer).
  await Promise.all([
    parts.pay ? attempt('pay page', () => parts.pay!.close()) : undefined,
    parts.api ? attempt('API', () => parts.api!.close()) : undefined,
  ]);
  if (parts.metrics) await attempt('metrics listener', () => parts.metrics!.close());
  if (parts.redis) await attempt('redis-server', () => parts.redis!.stop(2000));
  if (parts.restate) await attempt('restate-server', () => parts.restate!.stop(4000));
  if (parts.traceRelay) await attempt('trace relay', () => parts.traceRelay!.close());
  if (parts.workflows) await attempt('workflows endpoint', () => parts.workflows!.close());
  if (parts.pg) {
    const pid = parts.pgPid;
    await attempt('PostgreSQL', async () => {
      // The postmaster's pid decides when it is down (a server started by an earlier start, or one that has already
      // gone, is no child of this process); a failed stop() call says nothing the pid does not.
      const stopped = parts.pg!.stop().then(() => true, () => true);
      if (pid) {
        if (!(await Promise.race([stopped, waitGone(pid, 'postgres', 6000)]))) throw new Error(`pid ${pid} is still running`);
        // When the pid check won, give Node a moment to reap the child, so that no zombie outlives this process.
        await Promise.race([stopped, sleep(500)]);
      } else {
        await stopped;
      }
    });
  }
  parts.pgLog?.end();
  if (problems.length > 0) throw new Error(problems.join('; '));
}

/** A REDIS_URL as the block shows it: a password in it stays off the screen. */
function withoutCredentials(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString().replace(/\/$/, '');
}

function postmasterPid(pgDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

async function main(): Promise<number> {
  const started = performance.now();
  let config: Config;
  try {
    config = readConfig();
  } catch (e) {
    err(`error: ${(e as Error).message}`);
    return 1;
  }
  const dataDir = resolve(config.dataDir);
  const logsDir = join(dataDir, 'logs');
  mkdirSync(logsDir, { recursive: true });

  const previous = readRuntimeFile(dataDir);
  if (previous?.status !== 'stopped' && previous?.pid !== process.pid && isRunning(previous?.pid, 'deploy/local/start')) {
    err(`error: the service already runs on ${dataDir} (pid ${previous.pid}); stop it first, or use another DATA_DIR.`);
    return 1;
  }

  // `npm run start:cluster` keeps its durable work in a three-node Restate cluster under DATA_DIR/cluster; a single
  // node started beside it would never see that work.
  if (existsSync(join(dataDir, 'cluster', 'restate')) && !config.restateIngressUrl) {
    err(`error: ${dataDir} holds the Restate cluster of \`npm run start:cluster\` (its durable work lives there); give npm start a DATA_DIR of its own.`);
    return 1;
  }

  if (config.restateIngressUrl === undefined !== (config.restateAdminUrl === undefined)) {
    err('error: set both RESTATE_INGRESS_URL and RESTATE_ADMIN_URL to use an external Restate, or neither to run one here.');
    return 1;
  }

  let master: MasterKey;
  try {
    master = resolveMasterKey({ ...config, dataDir });
  } catch (e) {
    err(`error: ${(e as Error).message}`);
    return 1;
  }

  const parts: Parts = {};
  let stopping: Promise<number> | undefined;
  let runtime: RuntimeInfo | undefined;
  const stop = (why: string): Promise<number> => {
    stopping ??= (async () => {
      // A stop that hangs is cut short: every child is killed and the exit code says the stop was not clean.
      const watchdog = setTimeout(() => {
        err(`error: stopping took longer than ${STOP_DEADLINE_MS / 1000} s (${why}); killing what is left.`);
        if (parts.restate && isRunning(parts.restate.pid, 'restate-server')) process.kill(parts.restate.pid, 'SIGKILL');
        if (parts.redis && isRunning(parts.redis.pid, 'redis-server')) process.kill(parts.redis.pid, 'SIGKILL');
        if (parts.pgPid && isRunning(parts.pgPid, 'postgres')) process.kill(parts.pgPid, 'SIGQUIT');
        process.exit(1);
      }, STOP_DEADLINE_MS);
      let code = 0;
      try {
        await stopParts(parts);
      } catch (e) {
        err(`error while stopping: ${(e as Error).message}`);
        code = 1;
      }
      if (runtime) writeRuntimeFile(dataDir, { ...runtime, status: 'stopped', stoppedAt: new Date().toISOString() });
      clearTimeout(watchdog);
      return code;
    })();
    return stopping;
  };

  // embedded-postgres installs SIGINT/SIGTERM/SIGHUP handlers that stop PostgreSQL and exit at once with 130/143,
  // before the API has finished its requests. This command owns the order of shutdown instead.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (stopping) return;
      void stop(signal).then((code) => {
        out(code === 0 ? 'Faktura API stopped.' : 'Faktura API stopped, not cleanly.');
        process.exit(code);
      });
    });
  }

  try {
    await stopLeftovers(previous);

    // Ports: the ones of the last start when they are still free, so that URLs stay the same between starts.
    const taken = new Set<number>([config.port]);
    const pick = async (remembered: number | undefined): Promise<number> => {
      for (let hint = remembered; ; hint = undefined) {
        const port = await preferPort(hint !== undefined && taken.has(hint) ? undefined : hint);
        if (!taken.has(port)) {
          taken.add(port);
          return port;
        }
      }
    };
    const apiPort = config.port === 0 ? await pick(rememberedPort(previous, 'api')) : config.port;
    const workflowsPort = config.workflowsPort === 0 ? await pick(rememberedPort(previous, 'workflows')) : config.workflowsPort;
    taken.add(workflowsPort);
    // The pay page: PAY_PORT when set, else a free port kept across starts (two stacks side by side never clash).
    const payPort = config.payPort === undefined || config.payPort === 0 ? await pick(rememberedPort(previous, 'pay')) : config.payPort;
    taken.add(payPort);
    // The metrics listener: METRICS_PORT when set, else 9464 while free (the port a Prometheus is pointed at once),
    // else a free port kept across starts, so that two stacks side by side never clash.
    const chosenMetricsPort =
      config.metricsPort === undefined ? await pick(rememberedPort(previous, 'metrics') ?? DEFAULT_METRICS_PORT) : metricsPort(config, 'api');
    taken.add(chosenMetricsPort);

    // 1. PostgreSQL
    let databaseUrl: string;
    let pgPort: number | null = null;
    if (config.databaseUrl) {
      databaseUrl = config.databaseUrl;
    } else {
      pgPort = await pick(rememberedPort(previous, 'postgres'));
      const pgDir = join(dataDir, 'postgres');
      parts.pgLog = createWriteStream(join(logsDir, 'postgres.log'), { flags: 'a' });
      const pgLog = parts.pgLog;
      parts.pg = await startEmbeddedPostgres(pgDir, pgPort, (line) => void pgLog.write(`${line}\n`));
      parts.pgPid = postmasterPid(pgDir);
      await ensureDatabase(parts.pg.adminUrl, DATABASE);
      databaseUrl = parts.pg.urlFor(DATABASE);
    }
    const sql = createSql(databaseUrl, { max: 1 });
    try {
      await migrate(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }

    // 2. The runtime file, as soon as the database can be used: the operator command reads it.
    let restateIngressUrl: string;
    let restateAdminUrl: string;
    let restatePorts: { ingress: number; admin: number; fabric: number } | undefined;
    if (config.restateIngressUrl && config.restateAdminUrl) {
      restateIngressUrl = config.restateIngressUrl.replace(/\/+$/, '');
      restateAdminUrl = config.restateAdminUrl.replace(/\/+$/, '');
    } else {
      restatePorts = {
        ingress: await pick(rememberedPort(previous, 'restateIngress')),
        admin: await pick(rememberedPort(previous, 'restateAdmin')),
        fabric: await pick(rememberedPort(previous, 'restateFabric')),
      };
      restateIngressUrl = `http://127.0.0.1:${restatePorts.ingress}`;
      restateAdminUrl = `http://127.0.0.1:${restatePorts.admin}`;
    }
    const redisPort = config.redisUrl ? null : await pick(rememberedPort(previous, 'redis'));
    const apiHost = callableHost(config.host);
    runtime = {
      status: 'starting',
      dataDir,
      databaseUrl,
      restateIngressUrl,
      restateAdminUrl,
      workflowsUrl: config.workflowsUrl ?? `http://${config.workflowsHost}:${workflowsPort}`,
      redisUrl: config.redisUrl ?? `redis://127.0.0.1:${redisPort}`,
      apiUrl: `http://${apiHost}:${apiPort}`,
      payUrl: payBaseUrl({ ...config, payPort }),
      ports: {
        postgres: pgPort,
        restateIngress: restatePorts?.ingress ?? null,
        restateAdmin: restatePorts?.admin ?? null,
        restateFabric: restatePorts?.fabric ?? null,
        redis: redisPort,
        workflows: workflowsPort,
        api: apiPort,
        pay: payPort,
        metrics: chosenMetricsPort,
      },
      pid: process.pid,
      pids: { postgres: parts.pgPid ?? null, restateServer: null, redisServer: null },
      startedAt: new Date().toISOString(),
      stoppedAt: null,
    };
    writeRuntimeFile(dataDir, runtime);

    // 3. restate-server, signing every request to the workflows endpoint with the key pair under DATA_DIR/secrets
    // (docs/operations.md, "Request identity"); an external Restate signs with its own, named by RESTATE_IDENTITY_KEYS.
    let identityKeys = config.restateIdentityKeys;
    if (restatePorts) {
      const identity = readOrCreateRequestIdentity(dataDir);
      identityKeys = [identity.publicKey];
      // With OTEL_EXPORTER_OTLP_ENDPOINT, restate-server's own spans go to the same receiver (it exports OTLP/gRPC only).
      if (config.otlpEndpoint) parts.traceRelay = await startOtlpGrpcRelay(config.otlpEndpoint);
      parts.restate = await startRestateServer({
        baseDir: join(dataDir, 'restate'),
        ports: restatePorts,
        logFile: join(logsDir, 'restate.log'),
        requestIdentityPrivateKeyPemFile: identity.privateKeyPemFile,
        ...(parts.traceRelay ? { env: { RESTATE_TRACING_ENDPOINT: parts.traceRelay.url } } : {}),
      });
      runtime = { ...runtime, pids: { ...runtime.pids, restateServer: parts.restate.pid } };
      writeRuntimeFile(dataDir, runtime);
    }

    // 4. redis-server: the rate-limit and look-up-limit buckets the API and the pay page share (nothing on disk).
    if (redisPort !== null) {
      parts.redis = await startRedis({ dataDir: join(dataDir, 'redis'), port: redisPort, logFile: join(logsDir, 'redis.log') });
      runtime = { ...runtime, pids: { ...runtime.pids, redisServer: parts.redis.pid } };
      writeRuntimeFile(dataDir, runtime);
    }

    // 5. The workflows endpoint and the API, in this process. Their log lines wait until the block is printed.
    // One process, one registry: its one metrics listener serves the API's, the pay page's and the workflows' series.
    parts.metrics = await startMetricsListener(config.metricsHost, chosenMetricsPort);
    const logs = new HeldStdout();
    const stackConfig: Config = {
      ...config,
      dataDir,
      databaseUrl,
      restateIngressUrl,
      restateAdminUrl,
      restateIdentityKeys: identityKeys,
      workflowsPort,
      port: apiPort,
      payPort,
      redisUrl: runtime.redisUrl,
      // Mails point their tracking pixel at this API unless a public address is configured.
      publicApiUrl: config.publicApiUrl ?? runtime.apiUrl,
    };
    parts.workflows = await runWorkflows(stackConfig, { logStream: logs, keyring: createKeyring(master.key) });
    parts.api = await startApi(stackConfig, { keyring: createKeyring(master.key), logStream: logs });
    parts.pay = await startPay(stackConfig, { keyring: createKeyring(master.key), logStream: logs });

    runtime = { ...runtime, status: 'running', apiUrl: parts.api.url, payUrl: parts.pay.baseUrl, ports: { ...runtime.ports, metrics: parts.metrics.port } };
    writeRuntimeFile(dataDir, runtime);

    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const adminPrefix = dataDir === resolve(DEFAULT_DATA_DIR) ? '' : `DATA_DIR=${JSON.stringify(dataDir)} `;
    out(
      [
        `Faktura API is running (started in ${seconds} s)`,
        `  API        ${parts.api.url}/v1`,
        `  Docs       ${parts.api.url}/docs`,
        `  Pay page   ${parts.pay.baseUrl}/`,
        `  Restate UI ${restateAdminUrl}/ui/`,
        `  Redis      ${withoutCredentials(runtime.redisUrl)}`,
        `  Metrics    ${parts.metrics.url}`,
        ...(config.otlpEndpoint ? [`  Traces     ${withoutCredentials(config.otlpEndpoint)} (OTLP ${config.otlpProtocol}${parts.traceRelay ? ', restate-server\'s too' : ''})`] : []),
        // With the seller details every invoice must show (issuing refuses without them: seller_details_incomplete).
        `  Get a key  ${adminPrefix}npm run admin -- create-org --name "My Company" --cvr 12345678 --street "Nørregade 1" --postal-code 8000 --city "Aarhus C" --sandbox --json`,
        ...(master.source === 'development-file' ? [`  Key        development key in ${master.path} (set DATA_ENCRYPTION_KEY in production)`] : []),
        `  Data       ${dataDir}   (Ctrl-C stops everything)`,
      ].join('\n'),
    );
    logs.release();
    // A part that dies on its own (killed, out of memory, a crash) takes the whole service down with exit code 1 and
    // one line naming it, rather than leaving an API that answers while nothing behind it works.
    const watch = (name: string, exited: Promise<ChildExit>, log: string) =>
      void exited.then(async (how) => {
        // A stop under way ends them itself (neither shares this process group, so a Ctrl-C reaches only this process).
        if (stopping) return;
        err(`error: ${name} exited unexpectedly (${how.signal ?? `exit code ${how.code}`}); its log: ${log}. Stopping everything.`);
        await stop(`${name} exited`);
        out('Faktura API stopped, not cleanly.');
        process.exit(1);
      });
    if (parts.pg) watch('PostgreSQL', parts.pg.exited, join(logsDir, 'postgres.log'));
    if (parts.restate) watch('restate-server', parts.restate.exited, join(logsDir, 'restate.log'));
    if (parts.redis) watch('redis-server', parts.redis.exited, join(logsDir, 'redis.log'));
    return 0;
  } catch (e) {
    err(`error: ${(e as Error).message}`);
    if (!stopping) await stop('start-up failed');
    else await stopping;
    return 1;
  }
}

const code = await main();
// On success the process keeps running until a signal; on failure everything started has been stopped.
if (code !== 0) process.exit(code);
