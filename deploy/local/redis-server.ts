import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import * as net from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { freePort } from './ports.ts';
import type { ChildExit } from './restate-server.ts';

/**
 * A private redis-server (Debian's `redis-server` package) as a child process: the shared limiter store of
 * `npm start`, `npm run start:cluster` and the tests (docs/operations.md, "Shared limits").
 *
 *   const redis = await startRedis({ dataDir: join(DATA_DIR, 'redis') });   // a free port unless `port` is given
 *   … REDIS_URL = redis.url …
 *   await redis.stop();
 *
 * It listens on 127.0.0.1 only, keeps nothing on disk (no RDB snapshots, no append-only file: it holds token buckets,
 * and losing them on a restart only refills every bucket once, never lets a limit be exceeded for longer than one
 * burst), and writes its log to `logFile` (default `<dataDir>/redis.log`). The data directory is its working
 * directory and nothing more.
 */
export interface StartRedisOptions {
  /** Its working directory and log file live here (created when missing). */
  dataDir: string;
  /** A loopback port; default a free one. */
  port?: number;
  /** Where it logs; default `<dataDir>/redis.log`. */
  logFile?: string;
  /** How long to wait for the first PONG; default 10 s. */
  readyTimeoutMs?: number;
}

export interface RunningRedis {
  /** redis://127.0.0.1:<port>: what REDIS_URL is set to. */
  url: string;
  port: number;
  pid: number;
  /** SIGTERM, then SIGKILL when it has not exited after `timeoutMs` (default 3 s). Safe to call twice. */
  stop(timeoutMs?: number): Promise<void>;
  /** Settles when the server process has exited, for whatever reason. */
  exited: Promise<ChildExit>;
}

/** The binary: on PATH from Debian's package (deploy/ensure-installed.sh installs it where missing). */
export const REDIS_SERVER_BINARY = 'redis-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when a Redis server on the port answers PING. */
export function redisPing(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect({ port, host });
    let answer = '';
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) finish(answer.startsWith('+PONG'));
    });
  });
}

export async function startRedis(opts: StartRedisOptions): Promise<RunningRedis> {
  const dir = resolve(opts.dataDir);
  mkdirSync(dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const logFile = resolve(opts.logFile ?? join(dir, 'redis.log'));
  mkdirSync(dirname(logFile), { recursive: true });
  let child: ChildProcess;
  try {
    child = spawn(
      REDIS_SERVER_BINARY,
      [
        '--bind', '127.0.0.1',
        '--port', String(port),
        // No Unix socket, no persistence: the buckets are worth nothing after a restart (see above).
        '--unixsocket', '',
        '--save', '',
        '--appendonly', 'no',
        '--dir', dir,
        '--logfile', logFile,
        '--daemonize', 'no',
        // A bucket that was evicted would be a full one: when memory runs out, refuse writes (the services then count
        // in their own process) rather than forget buckets.
        '--maxmemory-policy', 'noeviction',
      ],
      // Its own process group: a Ctrl-C in the terminal reaches only the parent, which stops it after the services.
      { stdio: 'ignore', detached: true, cwd: dir },
    );
  } catch (err) {
    throw new Error(`redis-server could not be started (${(err as Error).message}); install Debian's redis-server package`);
  }
  const exited = new Promise<ChildExit>((r) =>
    child.exitCode !== null || child.signalCode !== null
      ? r({ code: child.exitCode, signal: child.signalCode })
      : child.once('exit', (code, signal) => r({ code, signal })),
  );
  const spawnError = new Promise<Error>((r) => child.once('error', r));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  // Never leak a server if the parent dies without stopping it.
  process.once('exit', kill);
  const stop = async (timeoutMs = 3000): Promise<void> => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
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

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 10_000);
  for (;;) {
    const failed = await Promise.race([spawnError, exited.then((how) => new Error(`redis-server exited (${how.signal ?? `code ${how.code}`}); its log: ${logFile}`)), sleep(0).then(() => undefined)]);
    if (failed) {
      await stop();
      const missing = (failed as NodeJS.ErrnoException).code === 'ENOENT';
      throw new Error(missing ? 'redis-server is not installed: install Debian\'s redis-server package (deploy/ensure-installed.sh does)' : failed.message);
    }
    if (await redisPing(port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not answer on port ${port} within ${opts.readyTimeoutMs ?? 10_000} ms; its log: ${logFile}`);
    }
    await sleep(20);
  }
  return { url: `redis://127.0.0.1:${port}`, port, pid: child.pid!, stop, exited };
}
