import { WORKFLOW_SERVICES } from '../../contracts/workflows.ts';
import { wakeRows } from '../clock/wake-index.ts';
import { PING_EVENT_TYPE, type EventEnvelope } from '../../contracts/events.ts';
import type { Clock } from '../shared/clock.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Db, Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { pingEnvelope, toEnvelope } from '../events/event-envelope.ts';
import { MAX_ENDPOINTS } from './endpoint-queries.ts';
import {
  ATTEMPTABLE_DELIVERY_STATUSES,
  INITIAL_DELIVERY_STATUS,
  isAttemptable,
  WEBHOOK_DELIVERY_LIFECYCLE,
  WEBHOOK_DELIVERY_TRANSITIONS,
  type WebhookDeliveryStatus,
} from './webhook-delivery-lifecycle.ts';
import { afterAttempt } from './retry-policy.ts';

/**
 * Webhook deliveries in PostgreSQL, the truth the delivery workflow acts on. One row per (event, endpoint), states
 * queued → delivered | failed → … → given-up (docs/api-conventions.md, "Events, webhooks and the test clock"), every
 * attempt in webhook_attempts, and a wake_index row while a delivery waits for its next attempt in business time.
 * When that is, and when a delivery gives up, is the retry policy's (retry-policy.ts).
 */

/** The Restate virtual object that runs one delivery (key: delivery id); its wake_index rows carry this name. */
export const WEBHOOK_DELIVERY_SERVICE = WORKFLOW_SERVICES.WebhookDelivery;
/** A delivery's wake-index target, without its key (contracts/workflows.ts, `WORK.webhookDelivery`). */
const DELIVERY_WAKE = { service: 'WebhookDelivery', handler: 'wake' } as const;

/**
 * How long an attempt may hold its delivery (the 15 s request timeout plus recording, with room to spare). A claim
 * held by a process that died lapses after this, and the wake index looks at the delivery again then.
 */
export const CLAIM_MS = 60_000;

type Status = WebhookDeliveryStatus;
const WD = WEBHOOK_DELIVERY_LIFECYCLE;
const T = WEBHOOK_DELIVERY_TRANSITIONS;

/** Queues `deliveries` (new rows) as due at `dueAt` and lists them in the wake index. */
async function insertDeliveries(
  sql: Queryable,
  organizationId: string,
  rows: { endpointId: string; eventId: string }[],
  dueAt: Date,
): Promise<string[]> {
  if (rows.length === 0) return [];
  const ids = rows.map(() => uuidv7());
  const inserted = await sql<{ id: string }[]>`
    INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, message_id, status, next_attempt_at)
    SELECT d.id, ${organizationId}, d.endpoint_id, d.event_id, d.event_id, ${INITIAL_DELIVERY_STATUS}, ${dueAt}
    FROM unnest(${ids}::uuid[], ${rows.map((r) => r.endpointId)}::uuid[], ${rows.map((r) => r.eventId)}::uuid[]) AS d (id, endpoint_id, event_id)
    ON CONFLICT (endpoint_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
    RETURNING id`;
  const newIds = inserted.map((r) => r.id);
  await indexWakes(sql, organizationId, newIds, dueAt);
  return newIds;
}

async function indexWakes(sql: Queryable, organizationId: string, deliveryIds: string[], dueAt: Date): Promise<void> {
  if (deliveryIds.length === 0) return;
  await wakeRows.list(sql, DELIVERY_WAKE, sql`SELECT k, ${organizationId}::uuid, ${dueAt}::timestamptz FROM unnest(${deliveryIds}::text[]) AS k`, 'move');
}

/**
 * The relay's fan-out of one committed event: one queued delivery per active endpoint subscribed to its type (an
 * inactive endpoint gets none; a replay fetches the event later), in one statement that also returns what each
 * first attempt needs. The new deliveries are claimed by `claimant`, who attempts them next; their wake index rows
 * come due only when that claim would have lapsed, so nothing else looks at them unless the claimant dies. Safe to
 * repeat with the same claimant: a second run creates nothing and returns the same unattempted deliveries.
 */
export async function fanOutEvent(
  db: Db,
  clock: Clock,
  keyring: Keyring,
  eventId: string,
  organizationId: string,
  claimant: string,
): Promise<{ id: string; plan: AttemptPlan }[]> {
  const now = await clock.now(organizationId);
  const lookAgain = new Date(now.getTime() + CLAIM_MS);
  // An organisation has at most MAX_ENDPOINTS endpoints: one id ready for each.
  const ids = Array.from({ length: MAX_ENDPOINTS }, () => uuidv7());
  const rows = await db.read((sql) => sql<AttemptRow[]>`
    WITH ev AS (
      SELECT * FROM events WHERE id = ${eventId} AND organization_id = ${organizationId}
    ), eps AS (
      SELECT w.id AS endpoint_id, row_number() OVER (ORDER BY w.id) AS n
      FROM ev JOIN webhook_endpoints w ON w.organization_id = ev.organization_id
      WHERE w.active AND ev.type = ANY (w.event_types)
    ), ins AS (
      INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, message_id, status, next_attempt_at, claimed_by, claimed_until)
      SELECT (${ids}::uuid[])[eps.n], ${organizationId}, eps.endpoint_id, ${eventId}, ${eventId}, ${INITIAL_DELIVERY_STATUS}, ${now},
             ${claimant}, now() + make_interval(secs => ${CLAIM_MS / 1000})
      FROM eps
      ON CONFLICT (endpoint_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
      RETURNING id, endpoint_id, round, attempts, message_id
    ), wake AS (
      ${wakeRows.list(sql, DELIVERY_WAKE, sql`SELECT id::text, ${organizationId}::uuid, ${lookAgain}::timestamptz FROM ins`, 'keep')}
    ), pending AS (
      SELECT id, endpoint_id, round, attempts, message_id FROM ins
      UNION
      SELECT id, endpoint_id, round, attempts, message_id FROM webhook_deliveries
      WHERE event_id = ${eventId} AND status IN ${WD.in(sql, [INITIAL_DELIVERY_STATUS])} AND attempts = 0 AND claimed_by = ${claimant}
    )
    SELECT p.id, ev.organization_id, p.round, p.attempts, p.message_id, NULL::jsonb AS ping,
           w.url, w.secret_enc, w.previous_secret_enc, coalesce(w.previous_secret_expires_at > now(), false) AS previous_live,
           ev.id AS e_id, ev.type AS e_type, ev.entity_family AS e_family, ev.entity_id AS e_entity, ev.sekvensnummer AS e_seq,
           ev.occurred_at AS e_at, ev.data AS e_data
    FROM pending p JOIN webhook_endpoints w ON w.id = p.endpoint_id CROSS JOIN ev
    ORDER BY p.id`);
  return rows.map((r) => ({ id: r.id, plan: attemptPlan(keyring, r) }));
}

/** `POST …/test`: a ping delivery with a body of its own and no real data; it is never in the event log. */
export async function queuePing(sql: Queryable, clock: Clock, organizationId: string, endpointId: string): Promise<EventEnvelope> {
  const id = uuidv7();
  const ping = pingEnvelope({ id, type: PING_EVENT_TYPE, timestamp: new Date().toISOString(), organizationId, data: {} });
  const dueAt = await clock.now(organizationId);
  const deliveryId = uuidv7();
  await sql`
    INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, ping, message_id, status, next_attempt_at)
    VALUES (${deliveryId}, ${organizationId}, ${endpointId}, ${sql.json(ping as never)}, ${id}, ${INITIAL_DELIVERY_STATUS}, ${dueAt})`;
  await indexWakes(sql, organizationId, [deliveryId], dueAt);
  return ping;
}

/** Replay limit per call (docs/api-conventions.md, "Events, webhooks and the test clock", Replay); the 90-day horizon is checked by the use case. */
export const REPLAY_CAP = 10_000;

/**
 * Replay for one endpoint from `since`: failed and given-up deliveries start a new round with a fresh schedule,
 * events never queued for this endpoint (it was created later, or inactive) get a delivery, delivered ones are
 * never touched, queued ones are already on their way. Oldest first, at most REPLAY_CAP per call; `possiblyMore`
 * when the cap cut the list short (the next call continues, because what this call queued is no longer a
 * candidate). Everything queued is due now and woken after commit by the route.
 */
export async function replayDeliveries(
  sql: Queryable,
  clock: Clock,
  organizationId: string,
  endpoint: { id: string; event_types: string[] },
  since: Date,
): Promise<{ requeued: number; enqueued: number; possiblyMore: boolean }> {
  const dueAt = await clock.now(organizationId);
  const requeueable = await sql<{ id: string }[]>`
    SELECT d.id FROM webhook_deliveries d JOIN events e ON e.organization_id = d.organization_id AND e.id = d.event_id
    WHERE d.endpoint_id = ${endpoint.id} AND d.status IN ${WD.in(sql, T.replay.from)} AND e.occurred_at >= ${since}
    ORDER BY d.event_id
    LIMIT ${REPLAY_CAP + 1}`;
  const requeue = requeueable.slice(0, REPLAY_CAP).map((r) => r.id);
  if (requeue.length) {
    await sql`
      UPDATE webhook_deliveries
      SET status = ${T.replay.to}, round = round + 1, attempts = 0, next_attempt_at = ${dueAt},
          claimed_by = NULL, claimed_until = NULL, updated_at = now()
      WHERE id = ANY (${requeue}::uuid[]) AND status IN ${WD.in(sql, T.replay.from)}`;
    await indexWakes(sql, organizationId, requeue, dueAt);
  }
  const room = REPLAY_CAP - requeue.length;
  // Past the cap already, there is more either way. Otherwise one row beyond the room (one row when there is no room
  // left) tells whether events are still missing after this call.
  const missing = requeueable.length > REPLAY_CAP ? [] : await sql<{ id: string }[]>`
    SELECT e.id FROM events e
    WHERE e.organization_id = ${organizationId} AND e.occurred_at >= ${since} AND e.type = ANY (${endpoint.event_types})
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = ${endpoint.id} AND d.event_id = e.id)
    ORDER BY e.id
    LIMIT ${room + 1}`;
  const enqueue = missing.slice(0, room);
  const enqueued = await insertDeliveries(sql, organizationId, enqueue.map((e) => ({ endpointId: endpoint.id, eventId: e.id })), dueAt);
  return {
    requeued: requeue.length,
    enqueued: enqueued.length,
    possiblyMore: requeueable.length > REPLAY_CAP || missing.length > room,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// What one attempt needs, and what it leaves behind

/** A delivery ready for its attempt: everything but what the engine must not journal is in here. */
export interface AttemptPlan {
  organizationId: string;
  round: number;
  number: number;
  url: string;
  messageId: string;
  body: string;
  /** Live signing secrets, current first. Never returned from the workflow step that reads them. */
  secrets: string[];
  /** When the event was committed (real time), for the delivery-lag metric; null for a ping. */
  eventAt: Date | null;
}

export type Plan =
  | { kind: 'gone' }
  | { kind: 'parked' }
  | { kind: 'wait'; dueInMs: number }
  | { kind: 'attempt'; plan: AttemptPlan };

interface PlanRow {
  id: string;
  organization_id: string;
  status: Status;
  round: number;
  attempts: number;
  next_attempt_at: Date | null;
  message_id: string;
  ping: EventEnvelope | null;
  url: string;
  active: boolean;
  secret_enc: Buffer;
  previous_secret_enc: Buffer | null;
  previous_live: boolean;
  claimed_by: string | null;
  claim_left_ms: number | null;
  e_id: string | null;
  e_type: string;
  e_family: string;
  e_entity: string;
  e_seq: number;
  e_at: Date;
  e_data: Record<string, unknown>;
}

/**
 * Decides what each woken delivery does now, by business time: nothing (it is gone, finished, or its endpoint is
 * inactive: then it leaves the wake index until a reactivation or replay), wait, or attempt. One query reads the
 * deliveries, their endpoints and their events; an attempt needs the delivery's claim, which `claimant` either
 * holds already (the fan-out's first attempts) or takes here. While someone else holds it, the answer is to wait.
 */
export async function planAttempts(db: Db, clock: Clock, keyring: Keyring, deliveryIds: string[], claimant: string): Promise<Map<string, Plan>> {
  const rows = await db.read((sql) => sql<PlanRow[]>`
    SELECT d.id, d.organization_id, d.status, d.round, d.attempts, d.next_attempt_at, d.message_id, d.ping, d.claimed_by,
           CASE WHEN d.claimed_until > now() THEN ceil(extract(epoch FROM d.claimed_until - now()) * 1000)::int END AS claim_left_ms,
           w.url, w.active, w.secret_enc, w.previous_secret_enc, coalesce(w.previous_secret_expires_at > now(), false) AS previous_live,
           e.id AS e_id, e.type AS e_type, e.entity_family AS e_family, e.entity_id AS e_entity, e.sekvensnummer AS e_seq,
           e.occurred_at AS e_at, e.data AS e_data
    FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id LEFT JOIN events e ON e.organization_id = d.organization_id AND e.id = d.event_id
    WHERE d.id = ANY (${deliveryIds}::uuid[])`);
  const plans = new Map<string, Plan>();
  const finished: string[] = [];
  for (const id of deliveryIds) {
    const row = rows.find((r) => r.id === id);
    if (!row || !isAttemptable(row.status) || row.next_attempt_at === null || !row.active) {
      finished.push(id);
      plans.set(id, { kind: row && row.next_attempt_at !== null && !row.active ? 'parked' : 'gone' });
      continue;
    }
    const now = (await clock.now(row.organization_id)).getTime();
    const dueInMs = row.next_attempt_at.getTime() - now;
    if (dueInMs > 0) {
      plans.set(id, { kind: 'wait', dueInMs });
      continue;
    }
    if (row.claim_left_ms !== null && row.claimed_by !== claimant) {
      plans.set(id, { kind: 'wait', dueInMs: row.claim_left_ms });
      continue;
    }
    if (row.claimed_by !== claimant || row.claim_left_ms === null) {
      const [claimed] = await db.read((sql) => sql`
        UPDATE webhook_deliveries SET claimed_by = ${claimant}, claimed_until = now() + make_interval(secs => ${CLAIM_MS / 1000})
        WHERE id = ${id} AND round = ${row.round} AND attempts = ${row.attempts}
          AND (claimed_until IS NULL OR claimed_until <= now() OR claimed_by = ${claimant})
        RETURNING 1`);
      // Someone else took it (or a replay moved it on) between the read and the claim: look again shortly.
      if (!claimed) {
        plans.set(id, { kind: 'wait', dueInMs: 1000 });
        continue;
      }
    }
    plans.set(id, { kind: 'attempt', plan: attemptPlan(keyring, row) });
  }
  if (finished.length) {
    await db.read((sql) => wakeRows.clear(sql, 'WebhookDelivery', sql`SELECT unnest(${finished}::text[])`));
  }
  return plans;
}

/** What an attempt is built from: the delivery, its endpoint's URL and secrets, its event (or ping). */
type AttemptRow = Pick<
  PlanRow,
  | 'id' | 'organization_id' | 'round' | 'attempts' | 'message_id' | 'ping' | 'url' | 'secret_enc' | 'previous_secret_enc'
  | 'previous_live' | 'e_id' | 'e_type' | 'e_family' | 'e_entity' | 'e_seq' | 'e_at' | 'e_data'
>;

function attemptPlan(keyring: Keyring, row: AttemptRow): AttemptPlan {
  // A ping is stored as jsonb, which reorders keys: it is sent in the envelope's order, as its 202 answer showed it.
  const body = row.ping
    ? JSON.stringify(pingEnvelope(row.ping))
    : JSON.stringify(
        toEnvelope({
          id: row.e_id!,
          organization_id: row.organization_id,
          type: row.e_type,
          entity_family: row.e_family,
          entity_id: row.e_entity,
          sekvensnummer: row.e_seq,
          occurred_at: row.e_at,
          data: row.e_data,
        }),
      );
  const secrets = [keyring.decrypt(row.secret_enc)];
  if (row.previous_secret_enc && row.previous_live) secrets.push(keyring.decrypt(row.previous_secret_enc));
  return {
    organizationId: row.organization_id, round: row.round, number: row.attempts + 1, url: row.url, messageId: row.message_id, body, secrets,
    eventAt: row.ping ? null : row.e_at,
  };
}

/** The outcome of one HTTP attempt, as journaled by the workflow (no secrets, no body). */
export interface AttemptResult {
  organizationId: string;
  round: number;
  number: number;
  /** Real time of the attempt, epoch milliseconds. */
  attemptedAt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  succeeded: boolean;
}

type Settled = (typeof T)['succeed' | 'giveUp']['to'];
type Retrying = (typeof T)['fail']['to'];

export type AfterAttempt = { next: 'done'; status: Settled } | { next: 'wait'; dueInMs: number; status: Retrying };

/**
 * Records attempts and moves their deliveries on, in one statement: delivered on success; failed with the next
 * attempt due after the retry policy's wait (business time); given-up after the eighth failure; the wake index follows,
 * and the claim is released. Idempotent: recording the same attempt twice changes nothing the second time. A replay
 * that started a new round meanwhile keeps its round: the attempt is recorded, the state is left to the new round.
 */
export async function recordAttempts(db: Db, clock: Clock, attempts: { deliveryId: string; result: AttemptResult }[]): Promise<Map<string, AfterAttempt>> {
  const rows = await Promise.all(
    attempts.map(async ({ deliveryId, result: a }) => {
      const { status, waitMs }: { status: Status; waitMs: number | null } = afterAttempt(a.number, a.succeeded);
      // Business time is read only when there is a next attempt to schedule.
      const next = waitMs === null ? null : new Date((await clock.now(a.organizationId)).getTime() + waitMs);
      return { deliveryId, a, waitMs, status, next, error: a.error === null ? null : a.error.slice(0, 500) };
    }),
  );
  // Arrays of dates and booleans travel as text: the driver would send them as a single value of the element type.
  const col = <T>(f: (r: (typeof rows)[number]) => T): T[] => rows.map(f);
  // The ids once more as plain lists: with them the planner looks rows up by key instead of joining whole tables.
  const ids = col((r) => r.deliveryId);
  const moved = await db.read((sql) => sql<{ id: string }[]>`
    WITH input AS (
      SELECT * FROM unnest(
        ${col((r) => r.deliveryId)}::uuid[], ${col((r) => r.a.round)}::int[], ${col((r) => r.a.number)}::int[],
        ${col((r) => r.a.organizationId)}::uuid[], ${col((r) => new Date(r.a.attemptedAt).toISOString())}::text[]::timestamptz[],
        ${col((r) => r.a.statusCode)}::int[], ${col((r) => r.a.durationMs)}::int[], ${col((r) => r.error)}::text[],
        ${col((r) => String(r.a.succeeded))}::text[]::bool[], ${col((r) => r.status)}::text[], ${col((r) => r.next?.toISOString() ?? null)}::text[]::timestamptz[]
      ) AS t (delivery_id, round, number, organization_id, attempted_at, status_code, duration_ms, error, succeeded, status, next_at)
    ), attempt AS (
      INSERT INTO webhook_attempts (delivery_id, round, number, organization_id, attempted_at, status_code, duration_ms, error, succeeded)
      SELECT delivery_id, round, number, organization_id, attempted_at, status_code, duration_ms, error, succeeded FROM input
      -- A delivery deleted with its endpoint while it was being attempted has nothing left to record.
      WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = input.delivery_id AND d.id = ANY (${ids}::uuid[]))
      ON CONFLICT DO NOTHING
    ), moved AS (
      UPDATE webhook_deliveries d
      SET status = i.status, attempts = i.number, next_attempt_at = i.next_at, last_attempt_at = i.attempted_at,
          last_status_code = i.status_code, last_error = i.error,
          delivered_at = CASE WHEN i.succeeded THEN i.attempted_at END,
          claimed_by = NULL, claimed_until = NULL, updated_at = now()
      FROM input i
      WHERE d.id = ANY (${ids}::uuid[]) AND d.id = i.delivery_id
        AND d.round = i.round AND d.attempts = i.number - 1 AND d.status IN ${WD.in(sql, ATTEMPTABLE_DELIVERY_STATUSES)}
      RETURNING d.id, d.organization_id, i.next_at
    ), unwake AS (
      ${wakeRows.clear(sql, 'WebhookDelivery', sql`SELECT m.id::text FROM moved m WHERE m.next_at IS NULL`)}
    ), rewake AS (
      ${wakeRows.list(sql, DELIVERY_WAKE, sql`SELECT m.id::text, m.organization_id, m.next_at FROM moved m WHERE m.next_at IS NOT NULL`, 'move')}
    )
    SELECT id FROM moved`);
  const movedIds = new Set(moved.map((m) => m.id));
  const out = new Map<string, AfterAttempt>();
  for (const r of rows) {
    if (!movedIds.has(r.deliveryId)) {
      out.set(r.deliveryId, await currentState(db, clock, r.deliveryId));
    } else {
      out.set(r.deliveryId, r.next === null ? { next: 'done', status: r.status as Settled } : { next: 'wait', dueInMs: r.waitMs!, status: T.fail.to });
    }
  }
  return out;
}

/** Recorded before, or superseded by a replay: what the row says now. */
async function currentState(db: Db, clock: Clock, deliveryId: string): Promise<AfterAttempt> {
  const [cur] = await db.read((sql) => sql<{ status: Status; next_attempt_at: Date | null; organization_id: string }[]>`
    SELECT status, next_attempt_at, organization_id FROM webhook_deliveries WHERE id = ${deliveryId}`);
  if (!cur || cur.next_attempt_at === null) return { next: 'done', status: cur?.status === T.succeed.to ? T.succeed.to : T.giveUp.to };
  const now = (await clock.now(cur.organization_id)).getTime();
  return { next: 'wait', dueInMs: Math.max(0, cur.next_attempt_at.getTime() - now), status: T.fail.to };
}
