import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Config } from './config.ts';
import { parseMasterKey } from './crypto.ts';

/**
 * Where the master key for personal data comes from.
 *
 * DATA_ENCRYPTION_KEY when set. Otherwise, outside production, a development key generated once and kept at
 * `<DATA_DIR>/secrets/encryption.key` (mode 0600), so that data written by one start can be read by the next and
 * by the standalone API entry point on the same DATA_DIR. In production a missing key is a start-up error: a
 * generated key on a container's disk would make the data unreadable after a redeploy.
 */
export interface MasterKey {
  key: Buffer;
  source: 'environment' | 'development-file';
  /** The development key's file, when that is the source. */
  path?: string;
}

export const devKeyPath = (dataDir: string): string => resolve(dataDir, 'secrets', 'encryption.key');

export function resolveMasterKey(config: Pick<Config, 'encryptionKey' | 'nodeEnv' | 'dataDir'>): MasterKey {
  if (config.encryptionKey) return { key: parseMasterKey(config.encryptionKey), source: 'environment' };
  if (config.nodeEnv === 'production') {
    throw new Error('DATA_ENCRYPTION_KEY is required when NODE_ENV=production (32 bytes as 64 hex characters or base64).');
  }
  const path = devKeyPath(config.dataDir);
  return { key: readOrCreateDevKey(path), source: 'development-file', path };
}

function readOrCreateDevKey(path: string): Buffer {
  const dir = resolve(path, '..');
  // Only the secrets directory is private; DATA_DIR itself must stay traversable (PostgreSQL runs as another user).
  mkdirSync(resolve(dir, '..'), { recursive: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    return readDevKey(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // Written to a private temp file, then hard-linked into place: link() fails if the key appeared meanwhile (a
  // second process starting on the same DATA_DIR), so both end up with the same key and nobody reads half a file.
  const tmp = join(dir, `.encryption.key.${process.pid}.${randomBytes(4).toString('hex')}`);
  writeFileSync(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  return readDevKey(path);
}

function readDevKey(path: string): Buffer {
  const text = readFileSync(path, 'utf8');
  // Anyone who can read the key can read the personal data; keep it owner-only even if it was copied in loosely.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  try {
    return parseMasterKey(text);
  } catch {
    throw new Error(`${path} does not hold a 32-byte key; restore it, or set DATA_ENCRYPTION_KEY`);
  }
}
