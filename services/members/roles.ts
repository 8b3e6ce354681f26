import { SCOPES, type Scope } from '../../contracts/scopes.ts';
import type { Keyring } from '../shared/crypto.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';

/**
 * The role catalogue (docs/api-conventions.md, "Members and roles"): fixed, in this order. A role is a set of scopes;
 * the scopes follow the catalogue order of contracts/scopes.ts.
 */
export interface Role {
  key: string;
  name: string;
  scopes: Scope[];
}

const BOOKKEEPER_EXCLUDED: ReadonlySet<Scope> = new Set(['members:manage', 'settings:write', 'webhooks:manage']);

export const ROLES: readonly Role[] = [
  { key: 'admin', name: 'Administrator', scopes: [...SCOPES] },
  { key: 'bookkeeper', name: 'Bookkeeper', scopes: SCOPES.filter((s) => !BOOKKEEPER_EXCLUDED.has(s)) },
  { key: 'viewer', name: 'Viewer', scopes: SCOPES.filter((s) => s.endsWith(':read') || s === 'api:discovery') },
];

export const ROLE_KEYS: readonly string[] = ROLES.map((r) => r.key);

export const isRole = (key: string): boolean => ROLE_KEYS.includes(key);

export const ADMIN_ROLE = 'admin';

/**
 * GET /v1/roles: the catalogue as a list like every other (docs/api-conventions.md, "Lists"): `limit` 1..200 (default
 * 50), `meta.nextCursor` null on the last page. Three roles fit one page unless a smaller limit asks for more.
 */
export function listRoles(keyring: Keyring, organizationId: string, q: { limit?: number; cursor?: string }): { items: Role[]; nextCursor: string | null } {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'roles', filters: [] };
  const after = q.cursor !== undefined ? Number(decodeCursor(keyring, scope, q.cursor)[0]) : -1;
  const rows = ROLES.map((role, position) => ({ role, position })).filter((r) => r.position > after).slice(0, limit + 1);
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.position]));
  return { items: items.map((r) => r.role), nextCursor };
}
