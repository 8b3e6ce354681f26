import { WORK } from '../../contracts/workflows.ts';
import { scheduleWake } from '../clock/wake-index.ts';
import type { Db } from '../shared/db.ts';

/**
 * The relay from the event log to the workflow engine.
 *
 * An event that some active endpoint wants gets an event_outbox row in its own transaction (a trigger on events),
 * and the commit notifies the `event_outbox` channel. The relay listens on that channel, claims outbox rows, hands
 * each to the engine with the event id as idempotency key, and deletes the rows it handed on. If the process dies
 * between commit and hand-off, the row stays (its claim lapses after CLAIM_SECONDS): the relay drains the outbox
 * when it starts, whenever its listener (re)connects, when the wake index sends the organisation's EventOutbox object a
 * few seconds after a hand-off failed, and whenever the housekeeping loop asks (`drain`, once a minute), so no committed event is lost between the database and the
 * engine. It runs no sweep of its own. A hand-off repeated after a crash is harmless: the engine deduplicates on
 * the idempotency key, and the fan-out creates at most one delivery per (event, endpoint).
 *
 * Hand-offs stream: up to `maxInFlight` are in flight at once, and rows are claimed as room frees up rather than in
 * rounds, so an event committed while others are being handed on waits for a free slot, not for a whole batch. The
 * rows handed on are deleted in the statement that claims the next ones.
 */
export interface EventForwarder {
  forward(event: { eventId: string; organizationId: string }): Promise<void>;
}

export const EVENT_OUTBOX_CHANNEL = 'event_outbox';

/** How long a claim protects a row from other relays; a hand-off takes milliseconds. */
export const CLAIM_SECONDS = 30;
/** After a failed hand-off (the engine unreachable), the organisation's outbox drain is due this much later. */
export const RETRY_AFTER_FAILURE_MS = 5000;

type Log = (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;

export interface RunningRelay {
  /** Hands on everything in the outbox now (what a notification does); resolves once the relay is idle. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export interface RelayOptions {
  /** Tests only: drain on a timer as well. The service relies on notifications, retries and the housekeeping loop. */
  sweepIntervalMs?: number;
  /** Hand-offs in flight at once: each waits for the engine to log the invocation (milliseconds to tens of them). */
  maxInFlight?: number;
  log?: Log;
}

class Relay {
  private inFlight = 0;
  private done: string[] = [];
  private released: string[] = [];
  private pumping: Promise<void> | undefined;
  private again = false;
  /** A hand-off failed: no new claims until the listed retry runs (or a notification), so a down engine is not hammered. */
  private failing = false;
  private closed = false;
  /** The last claim filled its batch: more rows may be waiting when room frees up. */
  private more = false;
  private idleWaiters: (() => void)[] = [];
  private readonly db: Db;
  private readonly forwarder: EventForwarder;
  private readonly max: number;
  private readonly log: Log;

  constructor(db: Db, forwarder: EventForwarder, max: number, log: Log) {
    this.db = db;
    this.forwarder = forwarder;
    this.max = max;
    this.log = log;
  }

  kick(resetFailure = false): void {
    if (this.closed) return;
    if (resetFailure) this.failing = false;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      this.settleIdle();
    });
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        while (!this.closed && !this.failing && this.inFlight < this.max) {
          const room = this.max - this.inFlight;
          const rows = await this.claim(room);
          this.more = rows.length === room;
          for (const row of rows) this.start(row);
          if (!this.more) break;
        }
      } while (this.again && !this.closed && !this.failing);
      if (this.inFlight === 0) await this.flush();
    } catch (err) {
      this.log('warn', 'event relay pass failed; the next notification or housekeeping pass retries', { err: String(err) });
    }
  }

  /** Claims up to `n` rows, and in the same statement deletes the rows handed on and releases the failed ones. */
  private async claim(n: number): Promise<{ event_id: string; organization_id: string }[]> {
    const done = this.done.splice(0);
    const released = this.released.splice(0);
    try {
      return await this.db.read((sql) => sql<{ event_id: string; organization_id: string }[]>`
        WITH handed AS (
          DELETE FROM event_outbox WHERE event_id = ANY (${done}::uuid[])
        ), given_back AS (
          UPDATE event_outbox SET claimed_until = NULL WHERE event_id = ANY (${released}::uuid[])
        )
        UPDATE event_outbox SET claimed_until = now() + make_interval(secs => ${CLAIM_SECONDS})
        WHERE event_id IN (
          SELECT event_id FROM event_outbox
          WHERE (claimed_until IS NULL OR claimed_until < now())
            AND NOT (event_id = ANY (${done}::uuid[])) AND NOT (event_id = ANY (${released}::uuid[]))
          ORDER BY event_id LIMIT ${n} FOR UPDATE SKIP LOCKED)
        RETURNING event_id, organization_id`);
    } catch (err) {
      this.done.push(...done);
      this.released.push(...released);
      throw err;
    }
  }

  /** Deletes the rows handed on and releases the failed ones, claiming nothing new (claim's own statement). */
  private async flush(): Promise<void> {
    if (this.done.length === 0 && this.released.length === 0) return;
    await this.claim(0);
  }

  private start(row: { event_id: string; organization_id: string }): void {
    this.inFlight++;
    void this.forwarder.forward({ eventId: row.event_id, organizationId: row.organization_id }).then(
      () => this.done.push(row.event_id),
      (err: unknown) => {
        this.released.push(row.event_id);
        if (!this.failing) {
          this.log('warn', 'event relay could not hand an event to the engine; its organisation\'s outbox drain is listed in the wake index', { err: String(err) });
          this.listRetry(row.organization_id);
        }
        this.failing = true;
      },
    ).finally(() => {
      this.inFlight--;
      // Room freed: claim more if the outbox may hold more; when everything has landed, delete what was handed on.
      if ((this.more && !this.failing) || this.inFlight === 0) this.kick();
    });
  }

  /**
   * The retry after a failed hand-off is wake-index work (`WORK.eventOutbox`, due a few seconds on): the engine's
   * scheduler sends the EventOutbox object, whose step drains the outbox through this relay, as soon as the engine
   * takes calls again. Until then (or a notification) no new rows are claimed, so a down engine is not hammered.
   */
  private listRetry(organizationId: string): void {
    void this.db
      .read((sql) => scheduleWake(sql, organizationId, WORK.eventOutbox(organizationId), new Date(Date.now() + RETRY_AFTER_FAILURE_MS)))
      .catch((err: unknown) => this.log('warn', 'event relay could not list its retry; the housekeeping backstop drains the outbox', { err: String(err) }));
  }

  private settleIdle(): void {
    if (this.pumping || this.inFlight > 0 || this.again) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  idle(): Promise<void> {
    if (!this.pumping && this.inFlight === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.pumping;
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 10));
    await this.flush().catch((err: unknown) => this.log('warn', 'event relay could not delete what it handed on; the rows go again', { err: String(err) }));
    for (const w of this.idleWaiters.splice(0)) w();
  }
}

export async function startEventRelay(db: Db, forwarder: EventForwarder, opts: RelayOptions = {}): Promise<RunningRelay> {
  const relay = new Relay(db, forwarder, opts.maxInFlight ?? 64, opts.log ?? (() => {}));
  // onlisten runs at every (re)connect of the listener: anything committed while it was down is drained then.
  const sub = await db.sql.listen(EVENT_OUTBOX_CHANNEL, () => relay.kick(), () => relay.kick(true));
  const timer = opts.sweepIntervalMs ? setInterval(() => relay.kick(true), opts.sweepIntervalMs) : undefined;
  timer?.unref();
  return {
    async drain() {
      relay.kick(true);
      await relay.idle();
    },
    async close() {
      clearInterval(timer);
      await sub.unlisten().catch(() => {});
      await relay.close();
    },
  };
}
