import type { Queryable } from '../services/shared/db.ts';

export const PURGE_BATCH_SIZE = 5000;

/**
 * Deletes stored idempotent responses older than the retention, in batches so that no statement holds locks on
 * more than a batch of rows or grows one huge transaction; returns how many were deleted.
 *
 * This is the one statement not scoped by organisation: retention is the same for every organisation. A payment's
 * key outlives this purge on purpose (it is also a unique column of the payment), so a retry years later still
 * cannot book twice. Safe to run twice: a second run finds nothing left to delete.
 */
export async function purgeIdempotencyKeys(sql: Queryable, retentionDays: number, batchSize = PURGE_BATCH_SIZE): Promise<number> {
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new Error(`retention must be a positive number of days, got ${retentionDays}`);
  let total = 0;
  for (;;) {
    const result = await sql`
      DELETE FROM idempotency_keys
      WHERE (organization_id, key) IN (
        SELECT organization_id, key FROM idempotency_keys
        WHERE created_at < now() - make_interval(days => ${retentionDays}::int)
        LIMIT ${batchSize}
        -- Rows another transaction has locked are left for the next run rather than waited for.
        FOR UPDATE SKIP LOCKED
      )`;
    total += result.count;
    if (result.count < batchSize) return total;
  }
}
