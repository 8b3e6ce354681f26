import type { WorkTarget } from '../../contracts/workflows.ts';
import type { Db, Queryable } from '../shared/db.ts';

/**
 * The wake index: every piece of durable work that is waiting, as (service, key, handler) and the business time it
 * is due (migration 012). It is the one mechanism behind time-driven work and lost hand-offs:
 *
 * - a feature that needs to act later, or after a commit, writes a row with `scheduleWake` in the transaction that
 *   makes the work pending, and its handler calls `clearWake` in the transaction that finishes it;
 * - a test clock advance, and the housekeeping loop for rows overdue by a minute, wake the organisation's
 *   BusinessClock object, which reads `dueWakes` and pokes each row's handler;
 * - a handler whose retries ran out `parkWake`s its row: kept, visible with its error, not poked again.
 *
 * Handlers are pokeable at any time: they re-read the facts and act only on what is due, so an early or repeated
 * poke is harmless. Nothing here reads rows that are not yet due (test/db/wake-index-plans.test.ts).
 */

export interface WakeRef {
  service: string;
  key: string;
  handler: string;
  /** Business time the row came due, as PostgreSQL writes it (microseconds kept): the page position of `dueWakes`. */
  dueAt: string;
}

/** Lists `target` as due at `at` (business time), or moves it there; a parked row is un-parked. */
export async function scheduleWake(sql: Queryable, organizationId: string, target: WorkTarget, at: Date): Promise<void> {
  await sql`SELECT wake_schedule(${target.service}, ${target.handler}, ${target.key}, ${organizationId}, ${at})`;
}

/** Removes `target` from the index: the work is done (or gone). */
export async function clearWake(sql: Queryable, target: Pick<WorkTarget, 'service' | 'key'>): Promise<void> {
  await sql`SELECT wake_clear(${target.service}, ${target.key})`;
}

/** Marks `target` as given up after its handler's retries: it stays listed with the error and is not poked again. */
export async function parkWake(sql: Queryable, target: Pick<WorkTarget, 'service' | 'key'>, error: string): Promise<boolean> {
  const rows = await sql`
    UPDATE wake_index SET parked_at = now(), last_error = ${error.slice(0, 1000)}
    WHERE service = ${target.service} AND key = ${target.key}
    RETURNING 1`;
  return rows.length > 0;
}

/**
 * One page of the organisation's rows that are due by its business clock, oldest first, after `after`: one range
 * of the (organization_id, due_at, service, key) index that stops at the business now.
 */
export async function dueWakes(db: Db, organizationId: string, after: WakeRef | null, limit: number): Promise<WakeRef[]> {
  const rows = await db.read((sql) => sql<{ service: string; key: string; handler: string; due_at: string }[]>`
    SELECT service, key, handler, due_at::text AS due_at FROM wake_index
    WHERE organization_id = ${organizationId} AND parked_at IS NULL
      AND (organization_id, due_at) <= (${organizationId}::uuid, business_now(${organizationId}))
      ${after ? sql`AND (organization_id, due_at, service, key) > (${organizationId}::uuid, ${after.dueAt}::text::timestamptz, ${after.service}, ${after.key})` : sql``}
    ORDER BY organization_id, due_at, service, key
    LIMIT ${limit}`);
  // The bounds and the order are written over (organization_id, due_at, …), the columns of the organisation's index:
  // a row comparison is an index condition there and on no other index, so no plan (custom or generic) walks the
  // due_at index through other organisations' rows that are due before this one's business now (a sandbox clock far
  // ahead would make that all of them).
  // due_at travels as text both ways: a timestamptz parameter would go through a JavaScript Date and lose the
  // microseconds, and the page would start again at its own last row.
  return rows.map((r) => ({ service: r.service, key: r.key, handler: r.handler, dueAt: r.due_at }));
}

/**
 * Organisations with rows overdue by more than `graceMs` of their business time, for the housekeeping loop's
 * `due-work` job: work that arms no timer of its own (a live organisation's reminder, case step or subscription
 * period, on its day), or a wake-up or hand-off that was lost (the API died after its commit, the engine was
 * unreachable, an invocation was killed). Rows overdue in real time come from the due index; a sandbox organisation
 * whose test clock runs ahead is checked through its own range.
 */
export async function overdueOrganizations(db: Db, graceMs: number, limit = 1000): Promise<string[]> {
  const rows = await db.read((sql) => sql<{ organization_id: string }[]>`
    SELECT organization_id FROM (
      SELECT DISTINCT organization_id FROM wake_index
      WHERE parked_at IS NULL AND due_at < now() - make_interval(secs => ${graceMs} / 1000.0)
      UNION
      SELECT c.organization_id FROM test_clocks c
      WHERE c.offset_ms > 0 AND EXISTS (
        SELECT 1 FROM wake_index w
        WHERE w.organization_id = c.organization_id AND w.parked_at IS NULL
          AND w.due_at < business_now(c.organization_id) - make_interval(secs => ${graceMs} / 1000.0))
    ) o
    LIMIT ${limit}`);
  return rows.map((r) => r.organization_id);
}

/** Parked work, newest first: what exhausted its retries and waits for an operator. */
export async function parkedWork(
  db: Db,
  limit = 100,
): Promise<{ service: string; key: string; handler: string; organizationId: string; parkedAt: string; lastError: string | null }[]> {
  const rows = await db.read((sql) => sql<{ service: string; key: string; handler: string; organization_id: string; parked_at: Date; last_error: string | null }[]>`
    SELECT service, key, handler, organization_id, parked_at, last_error FROM wake_index
    WHERE parked_at IS NOT NULL ORDER BY parked_at DESC LIMIT ${limit}`);
  return rows.map((r) => ({ service: r.service, key: r.key, handler: r.handler, organizationId: r.organization_id, parkedAt: r.parked_at.toISOString(), lastError: r.last_error }));
}

/**
 * An operator's retry of parked work: the row is un-parked and due now, so the housekeeping loop pokes it within a
 * minute (or at once with the organisation's next clock advance). Returns false when no such row is parked.
 */
export async function retryParkedWork(sql: Queryable, target: { service: string; key: string }): Promise<boolean> {
  const rows = await sql`
    UPDATE wake_index SET parked_at = NULL, last_error = NULL, due_at = now()
    WHERE service = ${target.service} AND key = ${target.key} AND parked_at IS NOT NULL
    RETURNING 1`;
  return rows.length > 0;
}
