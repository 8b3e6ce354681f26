import type { Db } from '../shared/db.ts';

/**
 * The relay from the event log to the workflow engine.
 *
 * An event that some active endpoint wants gets an event_outbox row in its own transaction (a trigger on events),
 * and the commit notifies the `event_outbox` channel. The relay listens on that channel, claims outbox rows, hands
 * each to the engine with the event id as idempotency key, and deletes the rows it handed on. If the process dies
 * between commit and hand-off, the row stays (its claim lapses after CLAIM_SECONDS): the relay drains the outbox
 * when it starts, whenever its listener (re)connects, and every `sweepIntervalMs`, so no committed event is lost
 * between the database and the engine. A hand-off repeated after a crash is harmless: the engine deduplicates on
 * the idempotency key, and the fan-out creates at most one delivery per (event, endpoint).
 */
export interface EventForwarder {
  forward(event: { eventId: string; organizationId: string }): Promise<void>;
}

export const EVENT_OUTBOX_CHANNEL = 'event_outbox';

/** How long a claim protects a row from other relays; a hand-off takes milliseconds. */
export const CLAIM_SECONDS = 30;

export interface RelayPass {
  forwarded: number;
  failed: number;
  /** The batch was full: more rows may be waiting. */
  full: boolean;
  lastError?: string;
}

/**
 * One pass over the outbox: claims up to `limit` unclaimed (or lapsed) rows, oldest event first, in one statement
 * (two relays never claim the same row), forwards them `concurrency` at a time, deletes those forwarded and releases
 * the claim of those that failed, for a later pass.
 */
export async function relayOutbox(db: Db, forwarder: EventForwarder, opts: { limit?: number; concurrency?: number } = {}): Promise<RelayPass> {
  const limit = opts.limit ?? 200;
  const concurrency = opts.concurrency ?? 16;
  const rows = await db.read((sql) => sql<{ event_id: string; organization_id: string }[]>`
    UPDATE event_outbox SET claimed_until = now() + make_interval(secs => ${CLAIM_SECONDS})
    WHERE event_id IN (
      SELECT event_id FROM event_outbox WHERE claimed_until IS NULL OR claimed_until < now()
      ORDER BY event_id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING event_id, organization_id`);
  if (rows.length === 0) return { forwarded: 0, failed: 0, full: false };
  const done: string[] = [];
  const failed: string[] = [];
  let lastError: string | undefined;
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const row = rows[next++]!;
      try {
        await forwarder.forward({ eventId: row.event_id, organizationId: row.organization_id });
        done.push(row.event_id);
      } catch (err) {
        failed.push(row.event_id);
        lastError = (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, worker));
  await db.read(async (sql) => {
    if (done.length) await sql`DELETE FROM event_outbox WHERE event_id = ANY (${done}::uuid[])`;
    if (failed.length) await sql`UPDATE event_outbox SET claimed_until = NULL WHERE event_id = ANY (${failed}::uuid[])`;
  });
  return { forwarded: done.length, failed: failed.length, full: rows.length === limit, ...(lastError ? { lastError } : {}) };
}

export interface RunningRelay {
  /** Drains the outbox now (also what a notification does); resolves when the outbox was empty or a pass failed. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export async function startEventRelay(
  db: Db,
  forwarder: EventForwarder,
  opts: { sweepIntervalMs?: number; log?: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void } = {},
): Promise<RunningRelay> {
  const log = opts.log ?? (() => {});
  let current: Promise<void> | undefined;
  let again = false;
  let closed = false;

  const loop = async () => {
    do {
      again = false;
      for (;;) {
        const pass = await relayOutbox(db, forwarder);
        if (pass.failed > 0) {
          // The engine is unreachable or refusing: the rows stay, the next sweep tries again.
          log('warn', 'event relay could not hand events to the engine; the sweep retries', { failed: pass.failed, err: pass.lastError });
          return;
        }
        if (!pass.full || closed) break;
      }
    } while (again && !closed);
  };
  const drain = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (current) {
      // A notification during a pass: one more pass after this one picks up what it committed.
      again = true;
      return current;
    }
    current = loop()
      .catch((err: unknown) => log('warn', 'event relay pass failed; the sweep retries', { err: String(err) }))
      .finally(() => {
        current = undefined;
      });
    return current;
  };

  // onlisten runs at every (re)connect of the listener: anything committed while it was down is drained then.
  const sub = await db.sql.listen(EVENT_OUTBOX_CHANNEL, () => void drain(), () => void drain());
  const timer = setInterval(() => void drain(), opts.sweepIntervalMs ?? 5000);
  timer.unref();
  return {
    drain,
    async close() {
      closed = true;
      clearInterval(timer);
      await sub.unlisten().catch(() => {});
      await current;
    },
  };
}
