import type { Keyring } from './crypto.ts';
import { safeEqual } from './crypto.ts';
import { DomainError } from './errors.ts';

/**
 * Opaque keyset cursors: base64url of a 16-byte MAC followed by the JSON of the last row's sort key. The MAC covers
 * that position, the organisation, the list and its filters, so a cursor cannot be forged, edited, or carried to
 * another organisation, list or filter: any of those is 400 invalid_cursor.
 */
export type KeysetPosition = (string | number | null)[];

export interface CursorScope {
  organizationId: string;
  list: string;
  /** The filters the cursor was issued under, in a fixed order. */
  filters: readonly unknown[];
}

const MAC_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const scopeText = (s: CursorScope): string => JSON.stringify([s.organizationId, s.list, s.filters]);
const macOf = (keyring: Keyring, scope: CursorScope, position: string): Buffer =>
  keyring.mac(`cursor|${scopeText(scope)}|${position}`).subarray(0, MAC_BYTES);

export function encodeCursor(keyring: Keyring, scope: CursorScope, position: KeysetPosition): string {
  const json = JSON.stringify(position);
  return Buffer.concat([macOf(keyring, scope, json), Buffer.from(json, 'utf8')]).toString('base64url');
}

export function decodeCursor(keyring: Keyring, scope: CursorScope, cursor: string): KeysetPosition {
  const invalid = () => new DomainError('invalid_cursor', 'The cursor was not issued by this API for this list and filters.');
  if (!BASE64URL.test(cursor)) throw invalid();
  const raw = Buffer.from(cursor, 'base64url');
  // Re-encoding must give the cursor back: no trailing bits or other spellings of the same bytes.
  if (raw.length <= MAC_BYTES || raw.toString('base64url') !== cursor) throw invalid();
  const json = raw.subarray(MAC_BYTES).toString('utf8');
  if (!safeEqual(raw.subarray(0, MAC_BYTES), macOf(keyring, scope, json))) throw invalid();
  try {
    const pos = JSON.parse(json) as unknown;
    if (!Array.isArray(pos)) throw invalid();
    return pos as KeysetPosition;
  } catch {
    throw invalid();
  }
}

/** Cuts a page fetched with limit + 1 rows and computes the next cursor from its last row. */
export function page<R>(
  rows: R[],
  limit: number,
  next: (last: R) => string,
): { items: R[]; nextCursor: string | null } {
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  return { items, nextCursor: next(items[items.length - 1]!) };
}
