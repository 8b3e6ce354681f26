import type { Keyring } from '../shared/crypto.ts';

// The fingerprint a stored response is checked against. The API's routes take it of the request; the batch takes it of
// each operation as of the single call it stands for, so the two share one key space.

/** Canonical JSON: object keys sorted at every depth, so key order never changes the hash. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
    .join(',')}}`;
}

/** The request's fingerprint: method, path (without trailing slashes), sorted query string and canonical body. */
export function requestFingerprint(keyring: Keyring, method: string, url: string, body: unknown): Buffer {
  const [rawPath, query = ''] = url.split('?', 2) as [string, string?];
  // The router treats /v1/customers/ as /v1/customers, so the fingerprint does too.
  const path = rawPath.length > 1 ? rawPath.replace(/\/+$/, '') : rawPath;
  const flags = new URLSearchParams(query);
  flags.sort();
  // No body and an empty object are one request: a route whose fields are all optional sees `{}` for both.
  const empty = body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
  return keyring.mac(`idempotency\n${method}\n${path}\n${flags.toString()}\n${empty ? 'null' : canonicalJson(body)}`);
}
