import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readOrCreatePrivateFile } from './dev-secrets.ts';

/**
 * Restate's request identity (docs/operations.md, "Request identity"): restate-server signs every request it sends
 * to the workflows endpoint with an Ed25519 private key (a PEM file, its `worker.invoker.request-identity-private-key-pem-file`),
 * and the endpoint accepts only requests signed by one of the public keys in `RESTATE_IDENTITY_KEYS`. Anyone else
 * who reaches the endpoint's port is answered 401 and cannot run a handler.
 *
 * Restate writes a public key as `publickeyv1_` followed by the base58 (Bitcoin alphabet) of the raw 32-byte Ed25519
 * key; the SDK's verifier takes exactly that.
 */

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
export const IDENTITY_KEY_PREFIX = 'publickeyv1_';

/** A `publickeyv1_…` key as Restate prints it: base58 of 32 bytes is 32 to 44 characters. */
export const IDENTITY_KEY_PATTERN = /^publickeyv1_[1-9A-HJ-NP-Za-km-z]{32,44}$/;

function base58(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)]! + out;
    n /= 58n;
  }
  // Leading zero bytes are written as leading '1's.
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}

/** The `publickeyv1_…` form of an Ed25519 public (or private) key. */
export function identityPublicKey(key: KeyObject | string): string {
  const pub = createPublicKey(key);
  if (pub.asymmetricKeyType !== 'ed25519') throw new Error(`a request identity key is Ed25519, not ${pub.asymmetricKeyType}`);
  // The JWK's x is the raw 32-byte public key, base64url.
  const raw = Buffer.from(pub.export({ format: 'jwk' }).x!, 'base64url');
  return `${IDENTITY_KEY_PREFIX}${base58(raw)}`;
}

export interface RequestIdentity {
  /** The private key, PEM (PKCS #8), for restate-server. Owner-only. */
  privateKeyPemFile: string;
  /** Its public key, for the workflows endpoint's RESTATE_IDENTITY_KEYS. */
  publicKey: string;
}

export const requestIdentityPath = (dataDir: string): string => resolve(dataDir, 'secrets', 'restate-identity.pem');

/**
 * The key pair `npm start` and `npm run start:cluster` sign Restate's requests with: generated once under
 * `<DATA_DIR>/secrets/restate-identity.pem` (mode 0600) and reused by every later start, so a running deployment's
 * endpoint and server agree across restarts. Two processes starting at once end up with the same key (the file is
 * hard-linked into place, which fails when it appeared meanwhile).
 */
export function readOrCreateRequestIdentity(dataDir: string): RequestIdentity {
  const path = readOrCreatePrivateFile(requestIdentityPath(dataDir), () =>
    generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  );
  return { privateKeyPemFile: path, publicKey: identityPublicKey(readFileSync(path, 'utf8')) };
}

