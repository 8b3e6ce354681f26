import type { Queryable } from '../shared/db.ts';

export interface ApiKeySummary {
  keyId: string;
  prefix: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
}

/** Never returns a key's secret: only the display prefix (first characters and last four). */
export async function listApiKeys(sql: Queryable, organizationId: string): Promise<ApiKeySummary[]> {
  const rows = await sql<{ id: string; display_prefix: string; scopes: string[]; created_at: Date; revoked_at: Date | null }[]>`
    SELECT id, display_prefix, scopes, created_at, revoked_at FROM api_keys
    WHERE organization_id = ${organizationId} ORDER BY id`;
  return rows.map((r) => ({
    keyId: r.id,
    prefix: r.display_prefix,
    scopes: r.scopes,
    createdAt: r.created_at.toISOString(),
    revokedAt: r.revoked_at?.toISOString() ?? null,
  }));
}
