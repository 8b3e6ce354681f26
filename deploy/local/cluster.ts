/**
 * The production shape on one machine (`npm run start:cluster`, the fault drill and `npm run test:cluster` build on
 * `startCluster`): PostgreSQL as `npm start` runs it, one private redis-server that the API and pay processes count
 * their limits in (docs/operations.md, "Shared limits"), restate-server as a three-node cluster with replication 2, two
 * API, two pay and two workflows processes, and HAProxy in front of each public port.
 *
 *   client ─▶ edge-api (PORT) ──▶ api-1, api-2 ─┐                 ┌─▶ restate-1 ┐
 *   client ─▶ edge-pay (PAY_PORT) ─▶ pay-1, pay-2 ┼─▶ internal proxy ┼─▶ restate-2 ┼─▶ workflows proxy ─▶ workflows-1, -2
 *                                 workflows-1, -2 ┘   (ingress, admin) └─▶ restate-3 ┘
 *
 * Why the replicas reach Restate through a proxy rather than each through a node of its own: every node's ingress
 * serves the whole cluster (it forwards an invocation to the partition's leader), so any node will do, and a proxy
 * that skips a node that went away keeps every replica working when one node is down. Pinning api-1 to restate-1
 * would take api-1's engine calls down with restate-1 although two nodes still run. The same holds for the admin
 * API the workflows processes register through (registration is cluster-wide).
 *
 * Why the workflows processes sit behind a proxy too: Restate sends an invocation to the deployment its service was
 * last registered with, one URL. Two processes registered under two URLs would be two deployments of which only the
 * newest gets work, and the other would stand idle until the newest dies (and then its work would wait for it). So
 * both register the one URL of the private proxy (HTTP/2 without TLS, what Restate speaks to an endpoint), which
 * spreads invocations over both and skips one that is down; Restate retries an invocation whose process died.
 *
 * Every process runs in a process group of its own, its output appended to DATA_DIR/logs/<name>.log, so a Ctrl-C
 * in a terminal reaches only the command that owns the order of shutdown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeFileSync, type WriteStream } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from '../../services/db/migrate.ts';
import { callableHost, DEFAULT_METRICS_PORT, METRICS_PORT_OFFSET, readConfig, type Config } from '../../services/shared/config.ts';
import { createSql } from '../../services/shared/db.ts';
import { resolveMasterKey, type MasterKey } from '../../services/shared/dev-secrets.ts';
import { readOrCreateRequestIdentity } from '../../services/shared/request-identity.ts';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedPg } from './embedded-postgres.ts';
import { haproxyBinary, haproxyConfig, readProxyStats, type ProxyFrontend, type ProxyServerStats } from './haproxy.ts';
import { freePort, isPortFree, preferPort } from './ports.ts';
import { startOtlpGrpcRelay, type OtlpGrpcRelay } from './otlp-grpc-relay.ts';
import { startRedis, type RunningRedis } from './redis-server.ts';
import { startCephS3, type RunningCephS3 } from './ceph-s3.ts';
import {
  fabricUrl,
  provisionCluster,
  restateClusterStatus,
  restateNodeConfig,
  RESTATE_NODES,
  type RestateClusterStatus,
  type RestateNodeSpec,
} from './restate-cluster.ts';
import { restateQuery, restateServerBinary, type ChildExit, type RestatePorts } from './restate-server.ts';
import { readRuntimeFile, writeRuntimeFile, type ClusterRuntime, type RuntimeInfo } from './runtime-file.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DATABASE = 'faktura';
/** DATA_DIR when it is unset: not npm start's `.data`, whose Restate state is a single node's (see dataDirProblem). */
export const DEFAULT_CLUSTER_DATA_DIR = '.data-cluster';
/** Every child carries this variable; a pid left by an earlier start is stopped only if its environment still names this DATA_DIR. */
const MARKER = 'FAKTURA_CLUSTER_DIR';
const REPLICAS = 2;
/** Restate's invocation streams stay open while a step runs (its own inactivity timeout is 1 min, abort 10 min). */
const WORKFLOWS_STREAM_TIMEOUT_MS = 15 * 60_000;

export type ProcessKind = 'postgres' | 'redis' | 'restate' | 'workflows' | 'api' | 'pay' | 'proxy';

export interface ClusterProcess {
  /** postgres, redis, restate-1…3, proxy-internal, workflows-1…2, api-1…2, pay-1…2, edge-api, edge-pay. */
  readonly name: string;
  readonly kind: ProcessKind;
  /** The current run's pid; it changes with a restart. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Where it answers: a replica's own address, a proxy's public one, a Restate node's admin API. */
  readonly url: string;
  readonly ports: Readonly<Record<string, number>>;
  readonly logFile: string;
  /** Settles when the current run exits. */
  readonly exited: Promise<ChildExit>;
  /** How many times `restart` started it again. */
  readonly restarts: number;
}

export interface ClusterUrls {
  /** The API behind its proxy (PORT), e.g. http://127.0.0.1:3000. */
  api: string;
  /** The pay page's public base (PAY_BASE_URL, else its proxy on PAY_PORT). */
  pay: string;
  /** The pay page's proxy itself. */
  payProxy: string;
  databaseUrl: string;
  /** The shared limiter store the API and pay processes count in (REDIS_URL, else the private redis-server). */
  redisUrl: string;
  /** The document archive's S3 endpoint (S3_ENDPOINT, else the private radosgw); null with DOCUMENT_STORE=postgres. */
  s3Endpoint: string | null;
  /** Restate's ingress and admin APIs behind the private proxy, as the replicas call them. */
  restateIngress: string;
  restateAdmin: string;
  /** The workflows endpoint as registered with Restate: the private proxy in front of both workflows processes. */
  workflows: string;
  /** The nodes' node-to-node addresses, for restatectl. */
  restateFabric: string[];
  /** Each proxy's stats page port (HAProxy CSV at `http://127.0.0.1:<port>/;csv`). */
  proxyStats: Record<'edge-api' | 'edge-pay' | 'proxy-internal', number>;
}

export interface RunningCluster {
  dataDir: string;
  urls: ClusterUrls;
  /** Every process, in start order; each entry follows its process through restarts. */
  processes: readonly ClusterProcess[];
  process(name: string): ClusterProcess;
  /** Milliseconds from the call until the API answered /readyz through its proxy. */
  startupMs: number;
  masterKey: MasterKey;
  /** Sends `signal` (default SIGKILL) and resolves when the process has exited. No `onExit` report follows. */
  kill(name: string, signal?: NodeJS.Signals): Promise<ChildExit>;
  /**
   * Starts a process again (stopping it first if it runs) on the same ports and waits until it is ready: what a
   * supervisor does. Not for postgres, whose restart would leave every pool broken.
   */
  restart(name: string): Promise<void>;
  /** The Restate cluster as `restatectl` sees it. */
  restateStatus(): Promise<RestateClusterStatus>;
  /** A proxy's per-server counters (requests per replica, servers up or down). */
  proxyStats(proxy: 'edge-api' | 'edge-pay' | 'proxy-internal'): Promise<ProxyServerStats[]>;
  /**
   * Memory per process with everything it started (PostgreSQL's backends, a replica's Chromium): the proportional
   * set size (shared pages split between their users), from /proc. Linux only; elsewhere an empty list.
   */
  memory(): ProcessMemory[];
  /** Stops everything, in reverse order of start; safe to call twice. */
  stop(): Promise<void>;
}

export interface ProcessMemory {
  name: string;
  /** The process and its descendants. */
  processes: number;
  pssBytes: number;
}

export interface StartClusterOptions {
  /** A process exited that nobody asked to stop: the caller decides what follows (start-cluster.ts stops or carries on). */
  onExit?: (proc: ClusterProcess, how: ChildExit) => void;
  /** Notices: an earlier start's leftovers being stopped. */
  log?: (line: string) => void;
  /** Each step of the start-up as it completes, with the milliseconds since the call (for measurements). */
  progress?: (step: string, ms: number) => void;
  /** Aborts a start under way (a Ctrl-C while starting): what was started is stopped and the start fails. */
  signal?: AbortSignal;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------------
// Processes

interface ProcessSpec {
  name: string;
  kind: ProcessKind;
  command: string;
  args: string[];
  env: Record<string, string>;
  url: string;
  ports: Record<string, number>;
  logFile: string;
  /** Resolves true once the process serves; polled until then. `logFrom`: the log file's size when this run began. */
  ready: (logFrom: number) => Promise<boolean>;
  readyTimeoutMs: number;
  /** How long a SIGTERM is given before SIGKILL. */
  stopTimeoutMs: number;
}

/** Never leave a child behind when this process exits without stopping it (one listener for all of them). */
const alwaysKilled = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of alwaysKilled) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

class Managed implements ClusterProcess {
  readonly name: string;
  readonly kind: ProcessKind;
  readonly url: string;
  readonly ports: Record<string, number>;
  readonly logFile: string;
  restarts = 0;
  exited: Promise<ChildExit> = Promise.resolve({ code: null, signal: null });
  /** Set while a stop or kill that someone asked for is under way: its exit is no surprise. */
  expected = true;
  private child: ChildProcess | undefined;

  private readonly spec: ProcessSpec;
  private readonly onUnexpectedExit: (p: Managed, how: ChildExit) => void;

  /** True once the cluster is stopping: nothing starts any more. */
  private readonly refused: () => boolean;

  constructor(spec: ProcessSpec, onUnexpectedExit: (p: Managed, how: ChildExit) => void, refused: () => boolean) {
    this.spec = spec;
    this.refused = refused;
    this.onUnexpectedExit = onUnexpectedExit;
    this.name = spec.name;
    this.kind = spec.kind;
    this.url = spec.url;
    this.ports = spec.ports;
    this.logFile = spec.logFile;
  }

  get pid(): number | undefined {
    return this.running ? this.child!.pid : undefined;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.running) throw new Error(`${this.name} already runs`);
    if (this.refused()) throw new Error(`${this.name}: the cluster is stopping`);
    const logFrom = fileSize(this.spec.logFile);
    const out = openSync(this.spec.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(this.spec.command, this.spec.args, {
        cwd: ROOT,
        env: this.spec.env,
        stdio: ['ignore', out, out],
        detached: true,
      });
    } finally {
      closeSync(out);
    }
    this.child = child;
    // An exit before it is ready fails this start (below); only one after that is reported.
    this.expected = true;
    const exited = new Promise<ChildExit>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    child.once('error', () => {}); // a failed spawn shows as an exit
    this.exited = exited;
    alwaysKilled.add(child);
    void exited.then((how) => {
      alwaysKilled.delete(child);
      if (!this.expected && this.child === child) this.onUnexpectedExit(this, how);
    });
    const deadline = Date.now() + this.spec.readyTimeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
        throw new Error(`${this.name} exited during start-up (${child.signalCode ?? `exit code ${child.exitCode}`})${logTail(this.logFile)}`);
      }
      if (Date.now() > deadline) {
        await this.stop(1000);
        throw new Error(`${this.name} was not ready after ${this.spec.readyTimeoutMs / 1000} s${logTail(this.logFile)}`);
      }
      if (await this.spec.ready(logFrom).catch(() => false)) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        this.expected = false;
        return;
      }
      await sleep(50);
    }
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<ChildExit> {
    if (!this.running) return this.exited;
    this.expected = true;
    this.child!.kill(signal);
    return this.exited;
  }

  /** SIGTERM, then SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = this.spec.stopTimeoutMs): Promise<void> {
    if (!this.running) return;
    this.expected = true;
    this.child!.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const gone = await Promise.race([this.exited.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
    clearTimeout(timer);
    if (!gone) {
      this.child!.kill('SIGKILL');
      await this.exited;
    }
  }
}

/** A process its own module starts (embedded PostgreSQL, redis-server): listed, not restartable. */
class Started implements ClusterProcess {
  readonly restarts = 0;
  exitedYet = false;
  readonly name: string;
  readonly kind: ProcessKind;
  readonly pid: number | undefined;
  readonly url: string;
  readonly ports: Record<string, number>;
  readonly logFile: string;
  readonly exited: Promise<ChildExit>;
  constructor(p: { name: string; kind: ProcessKind; pid: number | undefined; url: string; ports: Record<string, number>; logFile: string; exited: Promise<ChildExit> }) {
    this.name = p.name;
    this.kind = p.kind;
    this.pid = p.pid;
    this.url = p.url;
    this.ports = p.ports;
    this.logFile = p.logFile;
    this.exited = p.exited;
    void p.exited.then(() => (this.exitedYet = true));
  }
  get running(): boolean {
    return !this.exitedYet;
  }
}

function logTail(logFile: string): string {
  try {
    const lines = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
    return lines ? `; last lines of ${logFile}:\n${lines}` : '';
  } catch {
    return '';
  }
}

async function answers(url: string, ok: (res: Response) => Promise<boolean> | boolean = (r) => r.ok): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
  try {
    return await ok(res);
  } finally {
    await res.body?.cancel().catch(() => {});
  }
}

/** Any answer at all (a proxy with no server up yet answers 503, which is fine: it listens). */
const listens = (url: string) => answers(url, () => true);

/** True when the log file, from byte `from` on, contains `text`. */
function logSays(logFile: string, from: number, text: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(logFile, 'r');
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.max(0, size - from));
    readSync(fd, buf, 0, buf.length, from);
    return buf.toString('utf8').includes(text);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** True when something accepts a TCP connection on the loopback port. */
function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Leftovers of a start that was killed outright

function environMentions(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(marker);
  } catch {
    return false;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > until) return false;
    await sleep(50);
  }
  return true;
}

/**
 * A start that was killed outright (SIGKILL, a crash) leaves its children running, holding the ports and data
 * directories. Those whose environment still names this DATA_DIR are stopped (pids get reused).
 */
async function stopLeftovers(previous: Partial<RuntimeInfo> | undefined, marker: string, log: (line: string) => void): Promise<void> {
  const procs = previous?.cluster?.processes ?? [];
  const left = procs.filter(
    (p) =>
      typeof p.pid === 'number' &&
      alive(p.pid) &&
      (p.kind === 'redis' ? commandLine(p.pid).includes('redis-server') && commandLine(p.pid).includes(String(p.ports.port)) : p.kind !== 'postgres' && environMentions(p.pid, marker)),
  );
  for (const p of left) {
    log(`Stopping ${p.name} (pid ${p.pid}) left running by an earlier start…`);
    process.kill(p.pid!, 'SIGKILL');
  }
  for (const p of left) await waitGone(p.pid!, 5000);
  const pg = previous?.pids?.postgres;
  if (typeof pg === 'number' && alive(pg)) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pg}/cmdline`, 'utf8');
    } catch {
      /* gone */
    }
    if (cmd.includes('postgres')) {
      log(`Stopping PostgreSQL (pid ${pg}) left running by an earlier start…`);
      process.kill(pg, 'SIGINT');
      if (!(await waitGone(pg, 10_000))) throw new Error(`PostgreSQL (pid ${pg}) does not stop; stop it, then start again`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Start

/** Why this DATA_DIR cannot hold a cluster, or undefined. */
export function dataDirProblem(dataDir: string): string | undefined {
  // npm start's single node keeps its durable work (timers, journals) in DATA_DIR/restate; a cluster beside it
  // would start empty and leave that work behind, unseen.
  if (existsSync(join(dataDir, 'restate'))) {
    return `${dataDir} holds the single Restate node of \`npm start\` (its durable work lives there); give start:cluster a DATA_DIR of its own.`;
  }
  return undefined;
}

/** The cluster's DATA_DIR: DATA_DIR when set, else .data-cluster. */
export function clusterDataDir(env: NodeJS.ProcessEnv): string {
  return resolve(env.DATA_DIR || DEFAULT_CLUSTER_DATA_DIR);
}

/**
 * Starts the whole shape and resolves once the API answers /readyz through its proxy. Reads the same environment as
 * `npm start` (PORT, HOST, PAY_PORT, PAY_HOST, PAY_BASE_URL, DATA_DIR, DATABASE_URL, SMTP_URL,
 * WEBHOOK_ALLOW_LOOPBACK, DATA_ENCRYPTION_KEY, LOG_LEVEL, …); every replica gets it, with its own address added.
 * On failure everything it started is stopped before the error is thrown.
 */
export async function startCluster(env: NodeJS.ProcessEnv = process.env, opts: StartClusterOptions = {}): Promise<RunningCluster> {
  const started = performance.now();
  const log = opts.log ?? (() => {});
  const progress = (step: string) => opts.progress?.(step, Math.round(performance.now() - started));
  const dataDir = clusterDataDir(env);
  const config: Config = { ...readConfig(env), dataDir };
  if (config.restateIngressUrl || config.restateAdminUrl) {
    throw new Error('start:cluster runs its own Restate cluster: unset RESTATE_INGRESS_URL and RESTATE_ADMIN_URL.');
  }
  const problem = dataDirProblem(dataDir);
  if (problem) throw new Error(problem);
  const haproxy = haproxyBinary();
  if (!haproxy) throw new Error('haproxy is not installed: run `sh deploy/ensure-installed.sh` (as root it installs Debian\'s haproxy).');
  const logsDir = join(dataDir, 'logs');
  const clusterDir = join(dataDir, 'cluster');
  mkdirSync(logsDir, { recursive: true });
  mkdirSync(join(clusterDir, 'haproxy'), { recursive: true });
  const master = resolveMasterKey(config);
  const marker = `${MARKER}=${clusterDir}`;

  const previous = readRuntimeFile(dataDir);
  await stopLeftovers(previous, marker, log);

  // Ports: the ones of the last start when they are still free, so that URLs (and the Restate nodes' addresses, which
  // the cluster's metadata keeps) stay the same between starts.
  const remembered = new Map<string, number>();
  for (const p of previous?.cluster?.processes ?? []) for (const [k, v] of Object.entries(p.ports ?? {})) remembered.set(`${p.name}.${k}`, v);
  const taken = new Set<number>();
  const pick = async (key: string, fixed?: number): Promise<number> => {
    if (fixed !== undefined && fixed !== 0) {
      taken.add(fixed);
      return fixed;
    }
    for (let hint = remembered.get(key); ; hint = undefined) {
      const port = await preferPort(hint !== undefined && taken.has(hint) ? undefined : hint);
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  if (config.port !== 0) taken.add(config.port);
  if (config.payPort) taken.add(config.payPort);
  const apiEdgePort = await pick('edge-api.port', config.port);
  const payEdgePort = await pick('edge-pay.port', config.payPort);

  const processes: ClusterProcess[] = [];
  const managed = new Map<string, Managed>();
  let stopping: Promise<void> | undefined;
  const onUnexpectedExit = (p: ClusterProcess, how: ChildExit) => {
    if (!stopping) opts.onExit?.(p, how);
  };
  let pgPart: { pg: EmbeddedPg; pid: number | undefined; logStream: WriteStream } | undefined;
  let redisPart: RunningRedis | undefined;
  // restate-server's traces, from its OTLP/gRPC export to OTEL_EXPORTER_OTLP_ENDPOINT (the replicas export their own).
  let traceRelay: OtlpGrpcRelay | undefined;
  let cephPart: RunningCephS3 | undefined;
  let runtime: RuntimeInfo | undefined;

  const stopAll = (): Promise<void> => {
    stopping ??= (async () => {
      const problems: string[] = [];
      const attempt = async (what: string, fn: () => Promise<void>) => {
        try {
          await fn();
        } catch (e) {
          problems.push(`${what}: ${(e as Error).message}`);
        }
      };
      const stopKinds = async (kinds: ProcessKind[], timeoutMs?: number) =>
        void (await Promise.all([...managed.values()].filter((p) => kinds.includes(p.kind)).map((p) => attempt(p.name, () => p.stop(timeoutMs)))));
      // Reverse order of start: the edges stop taking requests, the replicas finish theirs (within their grace
      // period), Restate stops before the endpoints it calls, PostgreSQL last.
      const edges = [...managed.values()].filter((p) => p.name.startsWith('edge-'));
      await Promise.all(edges.map((p) => attempt(p.name, () => p.stop(2000))));
      await stopKinds(['api', 'pay'], 8000);
      if (redisPart) await attempt('redis-server', () => redisPart!.stop(2000));
      await stopKinds(['restate'], 6000);
      if (traceRelay) await attempt('trace relay', () => traceRelay!.close());
      await stopKinds(['workflows'], 6000);
      if (cephPart) await attempt('radosgw', () => cephPart!.stop(3000));
      await stopKinds(['proxy'], 2000);
      if (pgPart) {
        const { pg, pid } = pgPart;
        await attempt('PostgreSQL', async () => {
          const stopped = pg.stop().then(() => true, () => true);
          if (pid) {
            if (!(await Promise.race([stopped, (async () => (await waitGone(pid, 8000)) && (await sleep(300), true))()]))) {
              throw new Error(`pid ${pid} is still running`);
            }
          } else {
            await stopped;
          }
        });
        pgPart.logStream.end();
      }
      if (runtime) writeRuntimeFile(dataDir, { ...runtime, status: 'stopped', stoppedAt: new Date().toISOString(), cluster: runtimeCluster() });
      if (problems.length > 0) throw new Error(problems.join('; '));
    })();
    return stopping;
  };

  const runtimeCluster = (): ClusterRuntime => ({
    processes: processes.map((p) => ({ name: p.name, kind: p.kind, pid: p.pid ?? null, url: p.url, ports: { ...p.ports }, logFile: p.logFile })),
    restateFabric: restateNodes.map((n) => fabricUrl(n.ports)),
    proxyStats: { ...statsPorts },
  });

  const add = (spec: Omit<ProcessSpec, 'logFile' | 'env'> & { env: Record<string, string> }): Managed => {
    const m = new Managed({ ...spec, logFile: join(logsDir, `${spec.name}.log`), env: { ...spec.env, [MARKER]: clusterDir } }, onUnexpectedExit, () => stopping !== undefined);
    managed.set(m.name, m);
    processes.push(m);
    return m;
  };

  const restateNodes: RestateNodeSpec[] = [];
  const statsPorts = { 'edge-api': 0, 'edge-pay': 0, 'proxy-internal': 0 };
  const abort = () => void stopAll().catch(() => {});
  opts.signal?.addEventListener('abort', abort, { once: true });

  try {
    if (opts.signal?.aborted) throw new Error('the start was aborted');
    // All ports first: the configuration files name them all.
    for (let i = 1; i <= RESTATE_NODES; i++) {
      const name = `restate-${i}`;
      const ports: RestatePorts = { ingress: await pick(`${name}.ingress`), admin: await pick(`${name}.admin`), fabric: await pick(`${name}.fabric`) };
      restateNodes.push({ name, nodeName: `n${i}`, baseDir: join(clusterDir, 'restate', `n${i}`), ports });
    }
    const internal = {
      ingress: await pick('proxy-internal.restateIngress'),
      admin: await pick('proxy-internal.restateAdmin'),
      workflows: await pick('proxy-internal.workflows'),
      stats: await pick('proxy-internal.stats'),
    };
    statsPorts['proxy-internal'] = internal.stats;
    statsPorts['edge-api'] = await pick('edge-api.stats');
    statsPorts['edge-pay'] = await pick('edge-pay.stats');
    const replicaPorts = async (kind: string) => {
      const out: number[] = [];
      for (let i = 1; i <= REPLICAS; i++) out.push(await pick(`${kind}-${i}.port`));
      return out;
    };
    const apiPorts = await replicaPorts('api');
    const payPorts = await replicaPorts('pay');
    const workflowsPorts = await replicaPorts('workflows');
    // Metrics: replica set i (api-i, pay-i, workflows-i) gets a block of three ports, passed as its METRICS_PORT; each
    // process listens at its offset in it (services/shared/config.ts, metricsPort). METRICS_PORT set: the blocks start
    // there; unset: the last start's blocks, else from 9464, else anywhere free.
    const metricsBlock = async (i: number): Promise<number> => {
      if (config.metricsPort !== undefined && config.metricsPort !== 0) {
        const base = config.metricsPort + 3 * i;
        for (let k = 0; k < 3; k++) taken.add(base + k);
        return base;
      }
      const offered = [remembered.get(`api-${i + 1}.metrics`), DEFAULT_METRICS_PORT + 3 * i];
      for (;;) {
        const base = offered.shift() ?? (await freePort());
        const block = [base, base + 1, base + 2];
        if (base + 2 > 65_535 || block.some((p) => taken.has(p))) continue;
        if ((await Promise.all(block.map(isPortFree))).every(Boolean)) {
          for (const p of block) taken.add(p);
          return base;
        }
      }
    };
    const metricsBases: number[] = [];
    for (let i = 0; i < REPLICAS; i++) metricsBases.push(await metricsBlock(i));
    const metricsOf = (kind: keyof typeof METRICS_PORT_OFFSET, i: number) => metricsBases[i]! + METRICS_PORT_OFFSET[kind];

    const restateIngress = `http://127.0.0.1:${internal.ingress}`;
    const restateAdmin = `http://127.0.0.1:${internal.admin}`;
    const workflowsUrl = `http://127.0.0.1:${internal.workflows}`;
    const apiUrl = `http://${callableHost(config.host)}:${apiEdgePort}`;
    const payProxyUrl = `http://${callableHost(config.payHost)}:${payEdgePort}`;
    const payUrl = config.payBaseUrl ?? payProxyUrl;

    // 1. PostgreSQL (embedded unless DATABASE_URL is set) and the migrations, while the Restate nodes start.
    const database = (async (): Promise<string> => {
      if (config.databaseUrl) return config.databaseUrl;
      const pgPort = await pick('postgres.port');
      const pgDir = join(dataDir, 'postgres');
      const logFile = join(logsDir, 'postgres.log');
      const logStream = createWriteStream(logFile, { flags: 'a' });
      const pg = await startEmbeddedPostgres(pgDir, pgPort, (line) => void logStream.write(`${line}\n`));
      pgPart = { pg, pid: postmasterPid(pgDir), logStream };
      const proc = new Started({ name: 'postgres', kind: 'postgres', pid: pgPart.pid, url: `postgres://127.0.0.1:${pgPort}/${DATABASE}`, ports: { port: pgPort }, logFile, exited: pg.exited });
      processes.unshift(proc);
      void pg.exited.then((how) => onUnexpectedExit(proc, how));
      await ensureDatabase(pg.adminUrl, DATABASE);
      progress('postgres');
      return pg.urlFor(DATABASE);
    })().then(async (url) => {
      const sql = createSql(url, { max: 1 });
      try {
        await migrate(sql);
      } finally {
        await sql.end({ timeout: 5 });
      }
      progress('migrations');
      return url;
    });

    // 1b. The shared limiter store: ONE private redis-server for every API and pay process (REDIS_URL to use another).
    const redisStart = (async (): Promise<string> => {
      if (config.redisUrl) return config.redisUrl;
      const port = await pick('redis.port');
      const logFile = join(logsDir, 'redis.log');
      redisPart = await startRedis({ dataDir: join(clusterDir, 'redis'), port, logFile });
      const proc = new Started({ name: 'redis', kind: 'redis', pid: redisPart.pid, url: redisPart.url, ports: { port }, logFile, exited: redisPart.exited });
      processes.splice(processes[0]?.kind === 'postgres' ? 1 : 0, 0, proc);
      void redisPart.exited.then((how) => onUnexpectedExit(proc, how));
      progress('redis');
      return redisPart.url;
    })();

    // 1c. The document archive: a private radosgw with Object Lock (docs/operations.md, "Document archive"), fresh
    // and in memory for each start, unless the operator names a store (DOCUMENT_STORE, with S3_* for their own S3).
    const archiveStart = (async (): Promise<Record<string, string>> => {
      if (env.DOCUMENT_STORE) return {};
      const dir = join(clusterDir, 'ceph');
      rmSync(dir, { recursive: true, force: true });
      cephPart = await startCephS3({ dataDir: dir, port: await pick('s3.port') });
      progress('radosgw');
      return cephPart.env;
    })();

    // 2. Three Restate nodes, provisioned once as one cluster (restatectl provision). All sign their requests to the
    // workflows endpoints with the one key pair under DATA_DIR/secrets, whose public key the workflows processes get.
    const identity = readOrCreateRequestIdentity(dataDir);
    const restate = (async () => {
      if (config.otlpEndpoint) traceRelay = await startOtlpGrpcRelay(config.otlpEndpoint);
      for (const node of restateNodes) {
        mkdirSync(node.baseDir, { recursive: true });
        const configFile = join(clusterDir, 'restate', `${node.nodeName}.toml`);
        writeFileSync(configFile, restateNodeConfig(node, restateNodes, identity.privateKeyPemFile, traceRelay ? { tracingEndpoint: traceRelay.url } : {}));
        add({
          name: node.name,
          kind: 'restate',
          command: restateServerBinary(),
          args: ['--no-logo', '--config-file', configFile],
          // A clean environment: an operator's RESTATE_* variables are not configuration for these servers.
          env: { TMPDIR: node.baseDir, DO_NOT_TRACK: '1', PATH: process.env.PATH ?? '/usr/bin:/bin' },
          url: `http://127.0.0.1:${node.ports.admin}`,
          ports: { ...node.ports },
          // Its node-to-node port is what restatectl provisions through; the cluster's readiness is checked below.
          ready: () => tcpOpen(node.ports.fabric),
          readyTimeoutMs: 30_000,
          stopTimeoutMs: 5000,
        });
      }
      await Promise.all(restateNodes.map((n) => managed.get(n.name)!.start()));
      progress('restate nodes');
      // The first start provisions; later ones are told it was done ("provisioned by somebody else").
      progress(`restate ${await provisionCluster(restateNodes)}`);
      // Every node's listeners answer, and a query over every partition does: the cluster can take invocations.
      const deadline = Date.now() + 60_000;
      for (;;) {
        const ok = await Promise.all(
          restateNodes.map(async (n) => {
            try {
              return (await answers(`http://127.0.0.1:${n.ports.ingress}/restate/health`)) && (await answers(`http://127.0.0.1:${n.ports.admin}/health`));
            } catch {
              return false;
            }
          }),
        );
        if (ok.every(Boolean)) {
          try {
            await restateQuery(`http://127.0.0.1:${restateNodes[0]!.ports.admin}`, 'SELECT count(1) FROM sys_invocation', 2000);
            break;
          } catch {
            /* partitions not led yet */
          }
        }
        if (stopping) throw new Error('the start was aborted');
        if (Date.now() > deadline) throw new Error(`the Restate cluster was not ready after 60 s${logTail(join(logsDir, 'restate-1.log'))}`);
        await sleep(100);
      }
      progress('restate cluster');
    })();

    // 3. The private proxy: Restate's ingress and admin APIs, and the workflows endpoints.
    const internalProxy = add(
      proxySpec('proxy-internal', haproxy, clusterDir, internal.stats, [
        { name: 'restate-ingress', host: '127.0.0.1', port: internal.ingress, servers: restateNodes.map((n) => ({ name: n.name, port: n.ports.ingress })), checkPath: '/restate/health' },
        { name: 'restate-admin', host: '127.0.0.1', port: internal.admin, servers: restateNodes.map((n) => ({ name: n.name, port: n.ports.admin })), checkPath: '/health' },
        {
          name: 'workflows', host: '127.0.0.1', port: internal.workflows, h2: true, timeoutMs: WORKFLOWS_STREAM_TIMEOUT_MS,
          servers: workflowsPorts.map((port, i) => ({ name: `workflows-${i + 1}`, port })),
        },
      ]),
    );

    const internalUp = internalProxy.start();
    // Start-up steps run side by side; each is awaited below, and none may go unhandled meanwhile.
    for (const step of [database, redisStart, archiveStart, restate, internalUp]) step.catch(() => {});
    const [databaseUrl, redisUrl, archiveEnv] = await Promise.all([database, redisStart, archiveStart]);

    // 4. The replicas: the operator's environment, plus where everything is.
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) base[k] = v;
    for (const k of ['PORT', 'HOST', 'PAY_PORT', 'PAY_HOST', 'WORKFLOWS_PORT', 'WORKFLOWS_HOST', 'WORKFLOWS_URL', 'METRICS_PORT']) delete base[k];
    Object.assign(base, {
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      RESTATE_INGRESS_URL: restateIngress,
      RESTATE_ADMIN_URL: restateAdmin,
      // Mails point their tracking pixel at the API's public address unless one is configured.
      PUBLIC_API_URL: config.publicApiUrl ?? apiUrl,
      PAY_BASE_URL: payUrl,
      // The API's rate limits and the pay page's look-up limits count here, across the replicas together.
      REDIS_URL: redisUrl,
      // Issued documents go to the archive (DOCUMENT_STORE=s3 and where it is), unless the operator chose a store.
      ...archiveEnv,
      // Six Node processes load the same sources: V8's compiled code is cached and shared between them and starts.
      NODE_COMPILE_CACHE: env.NODE_COMPILE_CACHE || join(clusterDir, 'node-compile-cache'),
    });

    const workflows = workflowsPorts.map((port, i) => {
      const name = `workflows-${i + 1}`;
      const logFile = join(logsDir, `${name}.log`);
      return add({
        name,
        kind: 'workflows',
        command: process.execPath,
        args: ['workflows/main.ts'],
        env: { ...base, WORKFLOWS_HOST: '127.0.0.1', WORKFLOWS_PORT: String(port), WORKFLOWS_URL: workflowsUrl, RESTATE_IDENTITY_KEYS: identity.publicKey, METRICS_PORT: String(metricsBases[i]) },
        url: `http://127.0.0.1:${port}`,
        ports: { port, metrics: metricsOf('workflows', i) },
        // Its boot ends with the registration (of the shared URL) and the housekeeping start, then it says so.
        ready: async (from) => logSays(logFile, from, 'workflows endpoint listening'),
        readyTimeoutMs: 60_000,
        stopTimeoutMs: 6000,
      });
    });
    const apis = apiPorts.map((port, i) =>
      add({
        name: `api-${i + 1}`,
        kind: 'api',
        command: process.execPath,
        args: ['services/api/main.ts'],
        env: { ...base, HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: String(metricsBases[i]) },
        url: `http://127.0.0.1:${port}`,
        ports: { port, metrics: metricsOf('api', i) },
        // Ready: PostgreSQL and Restate answer, and Restate knows the workflows.
        ready: () => answers(`http://127.0.0.1:${port}/readyz`),
        readyTimeoutMs: 90_000,
        stopTimeoutMs: 8000,
      }),
    );
    // Behind our proxy the pay service reads the client address from X-Forwarded-For, which the proxy sets.
    const pays = payPorts.map((port, i) =>
      add({
        name: `pay-${i + 1}`,
        kind: 'pay',
        command: process.execPath,
        args: ['services/pay/main.ts'],
        env: { ...base, PAY_HOST: '127.0.0.1', PAY_PORT: String(port), PAY_TRUST_PROXY: 'true', METRICS_PORT: String(metricsBases[i]) },
        url: `http://127.0.0.1:${port}`,
        ports: { port, metrics: metricsOf('pay', i) },
        ready: () => answers(`http://127.0.0.1:${port}/healthz`),
        readyTimeoutMs: 60_000,
        stopTimeoutMs: 8000,
      }),
    );
    const startReplica = (m: Managed) => m.start().then(() => progress(m.name));
    // Every replica starts as soon as the database is migrated and loads its sources while Restate settles (the
    // loading is most of a Node process's start). A workflows process's registration and first sends retry until
    // the cluster takes them; an API process is ready once Restate knows the workflows.
    const replicas = Promise.all([...workflows, ...apis, ...pays].map(startReplica));
    replicas.catch(() => {});
    await Promise.all([restate, internalUp]);

    runtime = {
      status: 'starting',
      dataDir,
      databaseUrl,
      restateIngressUrl: restateIngress,
      restateAdminUrl: restateAdmin,
      workflowsUrl,
      redisUrl,
      apiUrl,
      payUrl,
      ports: {
        postgres: pgPart ? Number(new URL(databaseUrl).port) : null,
        restateIngress: internal.ingress,
        restateAdmin: internal.admin,
        restateFabric: restateNodes[0]!.ports.fabric,
        redis: redisPart?.port ?? null,
        workflows: internal.workflows,
        api: apiEdgePort,
        pay: payEdgePort,
      },
      pid: process.pid,
      pids: { postgres: pgPart?.pid ?? null, restateServer: null, redisServer: redisPart?.pid ?? null },
      startedAt: new Date().toISOString(),
      stoppedAt: null,
    };
    writeRuntimeFile(dataDir, { ...runtime, cluster: runtimeCluster() });

    await replicas;

    // 5. The edges, last: PORT answers once everything behind it does.
    const edgeApi = add(
      proxySpec('edge-api', haproxy, clusterDir, statsPorts['edge-api'], [
        { name: 'api', host: config.host, port: apiEdgePort, servers: apis.map((a) => ({ name: a.name, port: a.ports.port! })), checkPath: '/healthz', forwardedFor: 'set', apiEnvelopes: true },
      ]),
    );
    const edgePay = add(
      proxySpec('edge-pay', haproxy, clusterDir, statsPorts['edge-pay'], [
        {
          name: 'pay', host: config.payHost, port: payEdgePort, servers: pays.map((a) => ({ name: a.name, port: a.ports.port! })), checkPath: '/healthz',
          // An operator who trusts a proxy further out keeps its client address; otherwise ours is the only word.
          forwardedFor: config.payTrustProxy ? 'append' : 'set',
        },
      ]),
    );
    await Promise.all([edgeApi.start(), edgePay.start()]);
    progress('edges');
    const readyDeadline = Date.now() + 30_000;
    while (!(await answers(`http://127.0.0.1:${apiEdgePort}/readyz`).catch(() => false))) {
      if (stopping) throw new Error('the start was aborted');
      if (Date.now() > readyDeadline) throw new Error(`the API did not answer /readyz through its proxy within 30 s${logTail(edgeApi.logFile)}`);
      await sleep(100);
    }

    opts.signal?.removeEventListener('abort', abort);
    if (stopping) throw new Error('the start was aborted');
    runtime = { ...runtime, status: 'running' };
    writeRuntimeFile(dataDir, { ...runtime, cluster: runtimeCluster() });
    const startupMs = Math.round(performance.now() - started);
    const fabric = restateNodes.map((n) => fabricUrl(n.ports));
    const get = (name: string): Managed => {
      const m = managed.get(name);
      if (!m) throw new Error(`no restartable process named ${name} (${[...managed.keys()].join(', ')})`);
      return m;
    };
    return {
      dataDir,
      urls: {
        api: apiUrl,
        pay: payUrl,
        payProxy: payProxyUrl,
        databaseUrl,
        redisUrl,
        s3Endpoint: cephPart?.endpoint ?? (config.documentStore === 's3' ? (config.s3Endpoint ?? 'AWS S3') : null),
        restateIngress,
        restateAdmin,
        workflows: workflowsUrl,
        restateFabric: fabric,
        proxyStats: { ...statsPorts },
      },
      processes,
      process(name) {
        const p = processes.find((q) => q.name === name);
        if (!p) throw new Error(`no process named ${name}`);
        return p;
      },
      startupMs,
      masterKey: master,
      kill: (name, signal) => (name === 'postgres' ? killPostgres(signal) : name === 'redis' ? killRedis(signal) : get(name).kill(signal)),
      async restart(name) {
        const m = get(name);
        await m.stop();
        m.restarts++;
        await m.start();
        if (runtime && !stopping) writeRuntimeFile(dataDir, { ...runtime, cluster: runtimeCluster() });
      },
      restateStatus: () => restateClusterStatus(fabric),
      proxyStats: (proxy) => readProxyStats(statsPorts[proxy]),
      memory: () => processMemory(processes),
      stop: stopAll,
    };
  } catch (e) {
    opts.signal?.removeEventListener('abort', abort);
    await stopAll().catch(() => {});
    throw e;
  }

  async function killRedis(signal: NodeJS.Signals = 'SIGKILL'): Promise<ChildExit> {
    if (!redisPart) throw new Error('Redis is external (REDIS_URL): not ours to kill');
    process.kill(redisPart.pid, signal);
    return redisPart.exited;
  }

  async function killPostgres(signal: NodeJS.Signals = 'SIGKILL'): Promise<ChildExit> {
    if (!pgPart?.pid) throw new Error('PostgreSQL is external (DATABASE_URL): not ours to kill');
    process.kill(pgPart.pid, signal);
    return pgPart.pg.exited;
  }
}

function proxySpec(name: string, haproxy: string, clusterDir: string, statsPort: number, frontends: ProxyFrontend[]): ProcessSpec & { env: Record<string, string> } {
  const configFile = join(clusterDir, 'haproxy', `${name}.cfg`);
  writeFileSync(configFile, haproxyConfig({ frontends, statsPort }));
  const main = frontends[0]!;
  return {
    name,
    kind: 'proxy',
    command: haproxy,
    // -db: stay in the foreground (no daemon), so that this process is the one to signal and to watch.
    args: ['-db', '-f', configFile],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    url: `http://${callableHost(main.host)}:${main.port}`,
    ports: Object.fromEntries([...frontends.map((f) => [f.name === 'api' || f.name === 'pay' ? 'port' : camel(f.name), f.port]), ['stats', statsPort]]),
    logFile: '',
    ready: () => listens(`http://127.0.0.1:${statsPort}/`),
    readyTimeoutMs: 10_000,
    stopTimeoutMs: 2000,
  };
}

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function postmasterPid(pgDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** PSS of each process and its descendants, read from /proc (see RunningCluster.memory). */
export function processMemory(processes: readonly ClusterProcess[]): ProcessMemory[] {
  if (!existsSync('/proc/self/smaps_rollup')) return [];
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command may hold spaces and parentheses: the fields after the last ")" are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* gone meanwhile */
    }
  }
  const pss = (pid: number): number => {
    try {
      const kb = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
      return Number(kb ?? 0) * 1024;
    } catch {
      return 0;
    }
  };
  return processes
    .filter((p) => p.pid !== undefined && p.running)
    .map((p) => {
      const tree = [p.pid!];
      for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
      return { name: p.name, processes: tree.length, pssBytes: tree.reduce((sum, pid) => sum + pss(pid), 0) };
    });
}
