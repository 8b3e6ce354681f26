import { SCOPES, type Scope } from '../../contracts/scopes.ts';

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
