import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';

/** A response as it is stored under an Idempotency-Key and replayed (docs/api-conventions.md, "Idempotency"). */
export interface ResponseToStore {
  organizationId: string;
  key: string;
  requestHash: Buffer;
  status: number;
  /** The exact JSON text answered, or null for a 204. Stored encrypted: responses can hold personal data. */
  body: string | null;
  location: string | null;
}

/**
 * Stores the response in the caller's transaction, so it exists exactly when the effect does. Returns false when
 * the key already has a response: the caller lost a race and must roll back (and replay that one, or stop). The
 * statement is sent at once, so a caller may let it travel with other statements it has not awaited.
 */
export async function storeResponse(sql: Queryable, keyring: Keyring, r: ResponseToStore): Promise<boolean> {
  const inserted = await sql`
    INSERT INTO idempotency_keys (organization_id, key, request_hash, response_status, response_body, response_location)
    VALUES (${r.organizationId}, ${r.key}, ${r.requestHash}, ${r.status}, ${r.body === null ? null : keyring.encrypt(r.body)}, ${r.location})
    ON CONFLICT DO NOTHING RETURNING 1`;
  return inserted.length === 1;
}

/** The JSON text of a success response: the envelope of docs/api-conventions.md, "Envelopes and errors". */
export const responseJson = (data: unknown, meta: Record<string, unknown> | undefined): string =>
  JSON.stringify({ data: data ?? null, meta: meta ?? {} });
