import type { Scope } from '../../contracts/scopes.ts';
import type { Queryable } from '../shared/db.ts';
import { randomToken, sha256 } from '../shared/crypto.ts';
import { uuidv7 } from '../shared/ids.ts';

export interface NewApiKey {
  keyId: string;
  apiKey: string;
  scopes: Scope[];
}

/**
 * A key is `sk_test_` (sandbox organisations) or `sk_live_` followed by 192 random bits in base62. Only its
 * SHA-256 is stored; the key itself is returned once, here. High-entropy keys need no slow hash: nobody can
 * guess their way through a 2^192 space, so a fast lookup hash is the right trade.
 */
export async function createApiKey(sql: Queryable, organizationId: string, sandbox: boolean, scopes: readonly Scope[]): Promise<NewApiKey> {
  const apiKey = `sk_${sandbox ? 'test' : 'live'}_${randomToken(24)}`;
  const keyId = uuidv7();
  await sql`
    INSERT INTO api_keys (id, organization_id, key_hash, display_prefix, scopes)
    VALUES (${keyId}, ${organizationId}, ${sha256(apiKey)}, ${`${apiKey.slice(0, 12)}…${apiKey.slice(-4)}`}, ${sql.array([...scopes])})`;
  return { keyId, apiKey, scopes: [...scopes] };
}
