import type { WorkTarget } from '../../contracts/workflows.ts';
import type { PendingQuery, Row } from 'postgres';
import type { Db, Queryable } from '../shared/db.ts';
import { invocationRef, type OpenInvocations } from './engine-invocations.ts';

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
 * The set-based writes of the wake index, for statements that list or clear rows by the hundred (the webhook store's
 * deliveries), as fragments of the statement or CTE that has the rows. With `scheduleWake` and `clearWake` (and the
 * SQL functions of migrations 012, 029 and 030 that the triggers call) they are the only writers of the index.
 * `rows` is a query of (key, organization_id, due_at); `onConflict` says whether a listed row moves (`move`) or keeps
 * its time (`keep`). These do not notify the schedulers' listener: their rows are handed on by the poke that follows
 * (a row not due yet moves its shard's timer, `engine.poke`) or by the handler's release.
 */
export const wakeRows = {
  list: (sql: Queryable, target: Pick<WorkTarget, 'service' | 'handler'>, rows: PendingQuery<Row[]>, onConflict: 'move' | 'keep') => sql`
    INSERT INTO wake_index (service, handler, key, organization_id, due_at)
    SELECT ${target.service}, ${target.handler}, r.key, r.organization_id, r.due_at FROM (${rows}) AS r (key, organization_id, due_at)
    ON CONFLICT (service, key) DO ${onConflict === 'move' ? sql`UPDATE SET due_at = EXCLUDED.due_at, parked_at = NULL, last_error = NULL` : sql`NOTHING`}`,
  clear: (sql: Queryable, service: WorkTarget['service'], keys: PendingQuery<Row[]>) => sql`
    DELETE FROM wake_index WHERE service = ${service} AND key IN (${keys})`,
  /** Every row of the organisation's `service` that waits for later becomes due now (a re-plan of all of them). */
  dueNow: (sql: Queryable, organizationId: string, service: WorkTarget['service']) => sql`
    UPDATE wake_index SET due_at = now()
    WHERE organization_id = ${organizationId} AND service = ${service} AND parked_at IS NULL AND due_at > now()`,
};

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

/** The scheduler's shards (migration 029): eight, each with one WakeScheduler object and one armed timer. */
export const WAKE_SHARDS = 8;

/** A row's shard, by its organisation: the last hex digit of the id (a UUIDv7's random tail), the SQL `wake_shard`. */
export function wakeShardOf(organizationId: string): number {
  return parseInt(organizationId.slice(-1), 16) & (WAKE_SHARDS - 1);
}

/**
 * How many rows of one organisation may be in flight at once (claimed, their invocation running or queued). The
 * engine runs a few dozen invocations at a time; one organisation catching up thousands of steps holds at most this
 * many of them, and every other organisation's due work is admitted beside it.
 */
export const IN_FLIGHT_PER_ORGANIZATION = 8;

/**
 * A claim older than this is taken to be lost (its invocation was killed, or the process that claimed it died before
 * it sent): the backstop releases it and the row is handed on again. Longer than any handler's bounded retries.
 */
export const CLAIM_LEASE_MS = 90 * 60 * 1000;

/** A claimed row, to be sent to its handler with `{ claim: token }`. */
export interface ClaimedWake {
  service: string;
  key: string;
  handler: string;
  token: number;
}

/**
 * Claims one row for a poke (a hand-off after commit, an operator's retry): the token of the claim, or null when the
 * row is claimed already (its invocation is in flight or queued), parked, gone or not yet due. Only a claimer sends,
 * so a row never has two invocations in flight or queued, whatever pokes it.
 */
export async function claimWake(sql: Queryable, target: Pick<WorkTarget, 'service' | 'key'>): Promise<ClaimedWake | null> {
  const [row] = await sql<{ handler: string; claim_token: string }[]>`SELECT * FROM wake_claim(${target.service}, ${target.key})`;
  return row ? { service: target.service, key: target.key, handler: row.handler, token: Number(row.claim_token) } : null;
}

/**
 * Claims up to `limit` due rows of a shard for its scheduler, fairly across organisations (at most
 * IN_FLIGHT_PER_ORGANIZATION in flight each, round the organisations in due order). Reads only due rows.
 */
export async function claimDueWakes(db: Db, shard: number, limit: number, perOrganization = IN_FLIGHT_PER_ORGANIZATION): Promise<ClaimedWake[]> {
  const rows = await db.tx((sql) => sql<{ service: string; key: string; handler: string; claim_token: string }[]>`
    SELECT service, key, handler, claim_token FROM wake_claim_due(${shard}::smallint, ${limit}, ${perOrganization})`);
  return rows.map((r) => ({ service: r.service, key: r.key, handler: r.handler, token: Number(r.claim_token) }));
}

/** Releases within this of each other share one tick of the shard's scheduler. */
export const RELEASE_COALESCE_MS = 100;

/**
 * When a finished handler's release should nudge its shard's scheduler, and for when (epoch ms); null: no need.
 * The row is due again (it was rescheduled while in flight) or earlier than the armed timer; or the organisation has
 * due rows waiting for the slot this invocation held. Pure; tested from a table.
 */
export function releaseNudge(now: number, row: { dueAtMs: number | null; armedAtMs: number | null; backlog: boolean }): number | null {
  const soon = now + RELEASE_COALESCE_MS;
  if (row.backlog) return soon;
  if (row.dueAtMs === null) return null;
  if (row.armedAtMs !== null && row.dueAtMs >= row.armedAtMs) return null;
  return Math.max(row.dueAtMs, soon);
}

/**
 * Releases the claim `token` on a row when its invocation finished (null: a call sent no claim, nothing to release),
 * and answers whether, and for when, to nudge the row's shard scheduler (`releaseNudge`); null when the row is gone or
 * the claim is not this one's.
 */
export async function releaseWake(
  db: Db,
  target: { service: string; key: string },
  token: number | null,
): Promise<{ shard: number; nudgeAtMs: number | null } | null> {
  const [row] = await db.read((sql) => sql<{ shard: number; real_due_at: Date | null; armed_at: Date | null; backlog: boolean }[]>`
    SELECT shard, real_due_at, armed_at, backlog FROM wake_release(${target.service}, ${target.key}, ${token})`);
  if (!row) return null;
  const nudgeAtMs = releaseNudge(Date.now(), { dueAtMs: row.real_due_at?.getTime() ?? null, armedAtMs: row.armed_at?.getTime() ?? null, backlog: row.backlog });
  return { shard: row.shard, nudgeAtMs };
}

/**
 * A row a poke could not claim because it is not due yet: its shard and for when to nudge the shard's scheduler
 * (`releaseNudge`: only when earlier than the armed timer); null when the row is claimed, parked or gone, or the
 * timer is early enough. This is how a hand-off that schedules an earlier row moves its shard's timer.
 */
export async function laterWake(db: Db, target: { service: string; key: string }): Promise<{ shard: number; nudgeAtMs: number } | null> {
  const [row] = await db.read((sql) => sql<{ shard: number; real_due_at: Date; armed_at: Date | null }[]>`
    SELECT w.shard, wake_real_due(w.organization_id, w.due_at) AS real_due_at, s.armed_at
    FROM wake_index w JOIN wake_shards s ON s.shard = w.shard
    WHERE w.service = ${target.service} AND w.key = ${target.key} AND w.claimed_at IS NULL AND w.parked_at IS NULL`);
  if (!row) return null;
  const nudgeAtMs = releaseNudge(Date.now(), { dueAtMs: row.real_due_at.getTime(), armedAtMs: row.armed_at?.getTime() ?? null, backlog: false });
  return nudgeAtMs === null ? null : { shard: row.shard, nudgeAtMs };
}

/** A claim whose send failed is given back at once, so the row does not wait for the lease. */
export async function unclaimWake(db: Db, claim: ClaimedWake): Promise<void> {
  await releaseWake(db, claim, claim.token);
}

/**
 * The shard's earliest unclaimed row, in real time (epoch ms), or null when it has none; and records it as the
 * time the shard's scheduler arms its timer for, so that a row scheduled earlier notifies it (wake_schedule).
 */
export async function armShard(db: Db, shard: number, cap: Date): Promise<number | null> {
  const [row] = await db.read((sql) => sql<{ next: Date | null }[]>`
    WITH next AS (SELECT wake_next_due(${shard}::smallint) AS t)
    UPDATE wake_shards SET armed_at = least((SELECT t FROM next), ${cap})
    WHERE shard = ${shard} RETURNING (SELECT t FROM next) AS next`);
  return row?.next ? row.next.getTime() : null;
}

/**
 * Claims older than `olderThanMs` whose invocation the engine no longer has (it was killed, or the process that
 * claimed the row died before it sent) are released, so that their rows are handed on again at once rather than
 * after the lease. Answers how many were released. The engine is asked about at most `limit` claims a pass.
 */
export async function releaseClaimsWithoutInvocation(db: Db, open: OpenInvocations, olderThanMs: number, limit = 500): Promise<number> {
  const claims = await db.read((sql) => sql<{ service: string; key: string; handler: string; claim_token: string }[]>`
    SELECT service, key, handler, claim_token FROM wake_index
    WHERE claimed_at IS NOT NULL AND claimed_at < now() - make_interval(secs => ${olderThanMs} / 1000.0)
    ORDER BY claimed_at LIMIT ${limit}`);
  if (claims.length === 0) return 0;
  const running = await open(claims);
  let released = 0;
  for (const c of claims) {
    if (running.has(invocationRef(c))) continue;
    if (await releaseWake(db, c, Number(c.claim_token))) released++;
  }
  return released;
}

/**
 * The backstop of the housekeeping loop's `due-work` job: releases claims older than the lease (their invocation was
 * lost), and answers the shards with rows that are due by more than `graceMs` and unclaimed (a hand-off, a timer or a
 * notification was lost), whose schedulers it then wakes. Rows overdue in real time come from each shard's range; a
 * sandbox organisation whose test clock runs ahead is checked through its own range.
 */
export async function shardsWithLostWork(db: Db, graceMs: number, leaseMs = CLAIM_LEASE_MS): Promise<number[]> {
  return db.tx(async (sql) => {
    await sql`
      UPDATE wake_index SET claimed_at = NULL
      WHERE claimed_at IS NOT NULL AND claimed_at < now() - make_interval(secs => ${leaseMs} / 1000.0)`;
    const rows = await sql<{ shard: number }[]>`
      SELECT s.shard FROM wake_shards s
      WHERE EXISTS (
        SELECT 1 FROM wake_index w
        WHERE w.shard = s.shard AND w.parked_at IS NULL AND w.claimed_at IS NULL
          AND w.due_at < now() - make_interval(secs => ${graceMs} / 1000.0))
      UNION
      SELECT wake_shard(c.organization_id) FROM test_clocks c
      WHERE c.offset_ms > 0 AND EXISTS (
        SELECT 1 FROM wake_index w
        WHERE w.organization_id = c.organization_id AND w.parked_at IS NULL AND w.claimed_at IS NULL
          AND w.due_at < business_now(c.organization_id) - make_interval(secs => ${graceMs} / 1000.0))
      ORDER BY 1`;
    return rows.map((r) => r.shard);
  });
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
 * An operator's retry of parked work: the row is un-parked, unclaimed and due now, and the schedulers' listener is told
 * (`wake_earlier`), so its shard's scheduler hands it on at once (the housekeeping backstop within a couple of minutes
 * when no workflows process listens). Returns false when no such row is parked.
 */
export async function retryParkedWork(sql: Queryable, target: { service: string; key: string }): Promise<boolean> {
  const rows = await sql<{ shard: number }[]>`
    UPDATE wake_index SET parked_at = NULL, last_error = NULL, due_at = now(), claimed_at = NULL
    WHERE service = ${target.service} AND key = ${target.key} AND parked_at IS NOT NULL
    RETURNING shard`;
  if (rows.length === 0) return false;
  await sql`SELECT pg_notify('wake_earlier', ${String(rows[0]!.shard)})`;
  return true;
}
