import type { Keyring } from './crypto.ts';
import { safeEqual } from './crypto.ts';
import { DomainError } from './errors.ts';

/**
 * Opaque keyset cursors. A cursor is base64url(JSON of the last row's sort key) plus a MAC over that position,
 * the organisation, the list and its filters, so a cursor cannot be forged, edited, or carried to another
 * organisation, list or filter: any of those is 400 invalid_cursor.
 */
export type KeysetPosition = (string | number | null)[];

export interface CursorScope {
  organizationId: string;
  list: string;
  /** The filters the cursor was issued under, in a fixed order. */
  filters: readonly unknown[];
}

const scopeText = (s: CursorScope): string => JSON.stringify([s.organizationId, s.list, s.filters]);

export function encodeCursor(keyring: Keyring, scope: CursorScope, position: KeysetPosition): string {
  const body = Buffer.from(JSON.stringify(position)).toString('base64url');
  const mac = keyring.mac(`${scopeText(scope)}|${body}`).subarray(0, 16).toString('base64url');
  return `${body}.${mac}`;
}

export function decodeCursor(keyring: Keyring, scope: CursorScope, cursor: string): KeysetPosition {
  const invalid = () => new DomainError('invalid_cursor', 'The cursor was not issued by this API for this list and filters.');
  const dot = cursor.indexOf('.');
  if (dot <= 0) throw invalid();
  const body = cursor.slice(0, dot);
  const mac = Buffer.from(cursor.slice(dot + 1), 'base64url');
  const expected = keyring.mac(`${scopeText(scope)}|${body}`).subarray(0, 16);
  if (!safeEqual(mac, expected)) throw invalid();
  try {
    const pos = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
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
