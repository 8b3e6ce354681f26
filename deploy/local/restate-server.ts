import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/**
 * A single-node restate-server as a child process, for `npm start` and for tests.
 *
 * It listens on loopback TCP only (the 1.7 default binds every interface and also opens Unix sockets). The node
 * name is fixed: Restate refuses a data directory that was provisioned under another name. The partition count is
 * chosen at first start and can never change for that data directory, so it is small (fast start on one machine).
 */
export interface RestatePorts {
  ingress: number;
  admin: number;
  /** Node-to-node fabric; also serves /metrics. */
  fabric: number;
}

export interface RestateServerOptions {
  /** Holds the server's state between starts (`<baseDir>/<nodeName>/…`). */
  baseDir: string;
  ports: RestatePorts;
  /** Server output is appended here; without it the output is discarded. */
  logFile?: string;
  nodeName?: string;
  /**
   * The Ed25519 private key (PEM) the server signs every request to a service endpoint with; the endpoint accepts
   * only its public key (services/shared/request-identity.ts). Unset: requests go unsigned.
   */
  requestIdentityPrivateKeyPemFile?: string;
  /** Extra RESTATE_* settings (tests shorten the retry policy). */
  env?: Record<string, string>;
  readyTimeoutMs?: number;
}

export interface RestateServer {
  ingressUrl: string;
  adminUrl: string;
  ports: RestatePorts;
  pid: number;
  /** Milliseconds from spawn until SQL queries answer. */
  startupMs: number;
  /** SIGTERM, then SIGKILL when the server has not exited after `timeoutMs`. Safe to call twice. */
  stop(timeoutMs?: number): Promise<void>;
  /** Settles when the server process has exited, for whatever reason. */
  exited: Promise<ChildExit>;
}

/** How a child process ended: its exit code, or the signal that ended it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export const RESTATE_NODE_NAME = 'faktura';
const PARTITIONS = '4';
/**
 * How many invocations the server runs at once (worker.invoker.concurrent-invocations-limit; its own default is
 * 1000). The workflows process has a handful of database connections and one Chromium page: a burst of due work
 * (2 000 reminders on one clock advance) started all at once queues every invocation's first step ahead of any
 * rendering, and the first reminder leaves half a minute late. With 32 running and the rest waiting in Restate, the
 * pipeline stays short (test/bench/README.md, "Dunning"). The workflows never wait on one another (they only send), so
 * a waiting invocation cannot hold up a running one.
 */
export const CONCURRENT_INVOCATIONS = '32';

/**
 * The server's default journal retention (`default-journal-retention`): at least 35 days, a whole dunning cycle
 * (reminders 10 days apart, the påkrav deadline, the hand-over). The services set the same in their own options
 * (workflows/shared/durable.ts, RETENTION); this covers anything registered without it.
 */
export const DEFAULT_JOURNAL_RETENTION = '35d';

const require = createRequire(import.meta.url);

export function restateServerBinary(): string {
  return require.resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startRestateServer(opts: RestateServerOptions): Promise<RestateServer> {
  const baseDir = resolve(opts.baseDir);
  mkdirSync(baseDir, { recursive: true });
  const tmpDir = join(baseDir, 'tmp');
  mkdirSync(tmpDir, { recursive: true });
  const nodeName = opts.nodeName ?? RESTATE_NODE_NAME;
  const { ingress, admin, fabric } = opts.ports;
  let out: number | 'ignore' = 'ignore';
  if (opts.logFile) {
    mkdirSync(dirname(opts.logFile), { recursive: true });
    out = openSync(opts.logFile, 'a');
  }
  const started = performance.now();
  let child: ChildProcess;
  try {
    child = spawn(
      restateServerBinary(),
      [
        '--no-logo',
        '--node-name', nodeName,
        '--base-dir', baseDir,
        '--bind-ip', '127.0.0.1',
        '--listen-mode', 'tcp',
        '--log-filter', 'warn,octocrab=off',
        '--log-disable-ansi-codes', 'true',
      ],
      {
        stdio: ['ignore', out, out],
        // Its own process group: a Ctrl-C in the terminal reaches only the parent, which stops the server after
        // the API and the workflows endpoint, not in the middle of their shutdown.
        detached: true,
        // A clean environment: an operator's RESTATE_* variables meant for the API (RESTATE_ADMIN_URL…) must not be
        // read by the server as configuration keys.
        env: {
          RESTATE_INGRESS__BIND_PORT: String(ingress),
          RESTATE_ADMIN__BIND_PORT: String(admin),
          RESTATE_BIND_PORT: String(fabric),
          RESTATE_DEFAULT_NUM_PARTITIONS: PARTITIONS,
          RESTATE_WORKER__INVOKER__CONCURRENT_INVOCATIONS_LIMIT: CONCURRENT_INVOCATIONS,
          // Completed invocations keep their journals this long, for every service that does not set its own: a
          // whole dunning cycle can be read back (docs/operator-guide.md).
          RESTATE_DEFAULT_JOURNAL_RETENTION: DEFAULT_JOURNAL_RETENTION,
          // The key's place in 1.7's configuration (worker.invoker); the older top-level
          // RESTATE_REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE still works but logs a deprecation warning at every start.
          ...(opts.requestIdentityPrivateKeyPemFile ? { RESTATE_WORKER__INVOKER__REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: opts.requestIdentityPrivateKeyPemFile } : {}),
          RESTATE_DISABLE_TELEMETRY: 'true',
          DO_NOT_TRACK: '1',
          // The server makes a scratch directory per invocation task under TMPDIR and leaves it behind: keep them
          // inside its own data directory rather than strewn over /tmp.
          TMPDIR: tmpDir,
          ...opts.env,
        },
      },
    );
  } finally {
    // The child holds its own copy of the descriptor.
    if (typeof out === 'number') closeSync(out);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error('restate-server could not be spawned');

  const exited = new Promise<ChildExit>((r) =>
    child.exitCode !== null || child.signalCode !== null
      ? r({ code: child.exitCode, signal: child.signalCode })
      : child.once('exit', (code, signal) => r({ code, signal })),
  );
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  // Never leak a server if the parent dies without stopping it.
  process.once('exit', kill);

  const stop = async (timeoutMs = 5000): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) {
        kill();
        await exited;
      }
    }
    process.removeListener('exit', kill);
  };

  const adminUrl = `http://127.0.0.1:${admin}`;
  const ingressUrl = `http://127.0.0.1:${ingress}`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      process.removeListener('exit', kill);
      throw new Error(`restate-server exited during start-up (${child.exitCode ?? child.signalCode})${logTail(opts.logFile)}`);
    }
    if (Date.now() > deadline) {
      await stop(1000);
      throw new Error(`restate-server was not ready after ${opts.readyTimeoutMs ?? 30_000} ms${logTail(opts.logFile)}`);
    }
    if (await isRestateReady(adminUrl, ingressUrl)) break;
    await sleep(25);
  }
  return { ingressUrl, adminUrl, ports: { ...opts.ports }, pid, startupMs: Math.round(performance.now() - started), stop, exited };
}

/** Health on both listeners answers before the partitions do; a query proves the partitions are up. */
async function isRestateReady(adminUrl: string, ingressUrl: string): Promise<boolean> {
  try {
    // Short timeouts: a listener that accepts but does not answer yet must not hold the loop past its deadline.
    if (!(await fetch(`${adminUrl}/health`, { signal: AbortSignal.timeout(1000) })).ok) return false;
    if (!(await fetch(`${ingressUrl}/restate/health`, { signal: AbortSignal.timeout(1000) })).ok) return false;
    await restateQuery(adminUrl, 'SELECT count(1) FROM sys_invocation', 2000);
    return true;
  } catch {
    return false;
  }
}

function logTail(logFile: string | undefined): string {
  if (!logFile) return '';
  try {
    const lines = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-10).join('\n');
    return lines ? `; last lines of ${logFile}:\n${lines}` : '';
  } catch {
    return '';
  }
}

/** Runs a query against Restate's introspection tables (the admin SQL API). */
export async function restateQuery<T = Record<string, unknown>>(adminUrl: string, query: string, timeoutMs = 10_000): Promise<T[]> {
  const res = await fetch(`${adminUrl}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`Restate query failed (${res.status}): ${await res.text()}`);
  return ((await res.json()) as { rows: T[] }).rows;
}
