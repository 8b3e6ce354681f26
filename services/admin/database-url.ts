import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../../services/shared/config.ts';

/**
 * Which database the operator tools (`npm run admin`, `npm run migrate`) work on: DATABASE_URL when set, otherwise
 * the database of the embedded stack, whose URL `npm start` writes to `<DATA_DIR>/runtime.json`. An operator on a
 * laptop thus needs no configuration at all, and a deployment points the tools at its database explicitly.
 */
export function noDatabaseMessage(dataDir: string): string {
  return (
    `No database: DATABASE_URL is not set and DATA_DIR ${resolve(dataDir)} has no runtime.json (\`npm start\` writes it there). ` +
    'Run this command with the DATA_DIR of the running service (or start the service with this one), or set DATABASE_URL.'
  );
}

/** The tools cannot tell which database to use; they exit 1 with this message. */
export class DatabaseConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseConfigError';
  }
}

export interface DatabaseLocation {
  url: string;
  /** Where the URL came from, for messages: "DATABASE_URL" or the runtime file's path. */
  source: string;
}

export const runtimeFilePath = (dataDir: string): string => resolve(dataDir, 'runtime.json');

export function resolveDatabaseUrl(config: Pick<Config, 'databaseUrl' | 'dataDir'>): DatabaseLocation {
  if (config.databaseUrl) return { url: config.databaseUrl, source: 'DATABASE_URL' };
  const path = runtimeFilePath(config.dataDir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new DatabaseConfigError(noDatabaseMessage(config.dataDir));
    throw new DatabaseConfigError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DatabaseConfigError(`${path} is not valid JSON; restart the service with \`npm start\`, or set DATABASE_URL.`);
  }
  const url = (parsed as { databaseUrl?: unknown } | null)?.databaseUrl;
  if (typeof url !== 'string' || url === '') {
    throw new DatabaseConfigError(`${path} names no databaseUrl; restart the service with \`npm start\`, or set DATABASE_URL.`);
  }
  return { url, source: path };
}

/** The URL without its password, fit for an error message. */
export function describeDatabase(location: DatabaseLocation): string {
  return `${withoutPassword(location.url)} (from ${location.source})`;
}

/**
 * Why the database could not be used. The runtime file outlives the stack (it keeps the ports for the next start),
 * so a URL read from it may point at a stopped server: say so rather than leave the operator with ECONNREFUSED.
 */
export function unusableDatabaseMessage(location: DatabaseLocation, err: unknown): string {
  const hint = location.source === 'DATABASE_URL' ? '' : ' Is the service running? Start it with `npm start`, or set DATABASE_URL.';
  return `cannot use the database at ${describeDatabase(location)}: ${(err as Error).message}.${hint}`;
}

function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    // Not a URL the WHATWG parser accepts (postgres.js takes a few more forms): show none of it rather than a secret.
    return '(unparsable URL)';
  }
}
