import type { Queryable } from '../shared/db.ts';
import { API_KEYS_CHANNEL } from './api-key-queries.ts';

/**
 * Revokes a key for good. The notification (sent on commit) makes every API process drop the key from its
 * cache at once, so a revoked key stops working immediately, not after the cache TTL.
 */
export async function revokeApiKey(sql: Queryable, keyId: string): Promise<{ revoked: boolean; alreadyRevoked: boolean } | undefined> {
  const [row] = await sql<{ key_hash: Buffer; was_revoked: boolean }[]>`
    UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now())
    FROM api_keys old WHERE old.id = k.id AND k.id = ${keyId}
    RETURNING k.key_hash, old.revoked_at IS NOT NULL AS was_revoked`;
  if (!row) return undefined;
  await sql`SELECT pg_notify(${API_KEYS_CHANNEL}, ${row.key_hash.toString('hex')})`;
  return { revoked: true, alreadyRevoked: row.was_revoked };
}
