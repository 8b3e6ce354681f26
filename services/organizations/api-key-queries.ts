import type { Queryable } from '../shared/db.ts';
import type { Plan } from './plans.ts';

export interface ApiKeyRecord {
  keyId: string;
  organizationId: string;
  scopes: string[];
  revoked: boolean;
  sandbox: boolean;
  /** The organisation's plan: `pro` opens the reminder-flow routes. */
  plan: Plan;
}

export async function findApiKeyByHash(sql: Queryable, keyHash: Buffer): Promise<ApiKeyRecord | undefined> {
  const [row] = await sql<{ id: string; organization_id: string; scopes: string[]; revoked_at: Date | null; sandbox: boolean; plan: Plan }[]>`
    SELECT k.id, k.organization_id, k.scopes, k.revoked_at, o.sandbox, o.plan
    FROM api_keys k JOIN organizations o ON o.id = k.organization_id
    WHERE k.key_hash = ${keyHash}`;
  if (!row) return undefined;
  return {
    keyId: row.id,
    organizationId: row.organization_id,
    scopes: row.scopes,
    revoked: row.revoked_at !== null,
    sandbox: row.sandbox,
    plan: row.plan,
  };
}

/**
 * Channel on which key changes are announced so every API process drops its cached copy at once: the key's SHA-256 in
 * hex (revoked), or an empty payload (an organisation's plan changed), which drops every cached key. Each API process
 * also sends itself heartbeats on it (`hb:…`, services/api/plugins/auth.ts), which the others ignore.
 */
export const API_KEYS_CHANNEL = 'api_keys_changed';
