import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, join, resolve } from 'node:path';
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
  return readDevKey(readOrCreatePrivateFile(path, () => `${randomBytes(32).toString('hex')}\n`));
}

/**
 * A secret file under DATA_DIR/secrets, created once (mode 0600) with `content()` and read by every later start: the
 * development key and the engine's request-identity key. Returns the file's path once it exists, owner-only.
 */
export function readOrCreatePrivateFile(path: string, content: () => string): string {
  const dir = resolve(path, '..');
  // Only the secrets directory is private; DATA_DIR itself must stay traversable (PostgreSQL runs as another user).
  mkdirSync(resolve(dir, '..'), { recursive: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!existsSync(path)) {
    // Written to a private temp file, then hard-linked into place: link() fails if the file appeared meanwhile (a
    // second process starting on the same DATA_DIR), so both end up with the same secret and nobody reads half a file.
    const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}`);
    writeFileSync(tmp, content(), { mode: 0o600, flag: 'wx' });
    try {
      linkSync(tmp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  // Anyone who can read the file can read the personal data or run any handler; keep it owner-only even if it was
  // copied in loosely.
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return path;
}

function readDevKey(path: string): Buffer {
  const text = readFileSync(path, 'utf8');
  try {
    return parseMasterKey(text);
  } catch {
    throw new Error(`${path} does not hold a 32-byte key; restore it, or set DATA_ENCRYPTION_KEY`);
  }
}
