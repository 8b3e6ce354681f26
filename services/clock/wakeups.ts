import { WORKFLOW_SERVICES } from '../../contracts/workflows.ts';
import type { Db } from '../shared/db.ts';
import { createEngineClient, type EngineClient } from '../shared/engine-client.ts';
import { WAKE_SHARDS } from './wake-index.ts';

/**
 * Wakes pending durable work whose business time has come: webhook retries, reminder steps, collection case steps,
 * subscription periods, and hand-offs after commit that were lost. The pending work is listed in the wake index
 * (services/clock/wake-index.ts; docs/architecture.md, "Time-driven work"); the organisation's BusinessClock object
 * reads it and pokes each row's handler, which then decides on business time read through its own journal whether
 * it is really due.
 */
export interface Wakeups {
  /** Asks the engine to wake every step of the organisation that is due by its business clock. */
  wakeDue(organizationId: string): Promise<void>;
}

/** The Restate virtual object (keyed by organisation) that fans the wake-ups out. */
export const BUSINESS_CLOCK = WORKFLOW_SERVICES.BusinessClock;

/**
 * A one-way call to the organisation's BusinessClock object through Restate's ingress. A lost call only delays: the
 * housekeeping loop's `due-work` job wakes every organisation with overdue rows once a minute.
 */
export function createRestateWakeups(ingressUrl: string): Wakeups {
  const engine = createEngineClient(ingressUrl);
  return { wakeDue: (organizationId) => engine.send({ service: 'BusinessClock', handler: 'wakeDue', key: organizationId }) };
}

/**
 * The post-commit step of a mutation that made timed steps due (a test clock advance, a webhook ping, replay or
 * reactivation): wakes them now. Without an engine (tests of the API alone) it only says so; the housekeeping loop
 * would find them.
 */
export const wakeDueAfterCommit =
  (wakeups: Wakeups | undefined, organizationId: string, log: { warn(msg: string): void }) => async (): Promise<void> => {
    if (!wakeups) {
      log.warn('no workflow engine configured: what this change made due waits for the housekeeping loop');
      return;
    }
    await wakeups.wakeDue(organizationId);
  };

/** Asks every shard's scheduler to run now (each then arms its timer to its earliest row): at every start-up. */
export async function nudgeAllShards(engine: Pick<EngineClient, 'send'>, idempotencyKey: string): Promise<void> {
  await Promise.all(
    Array.from({ length: WAKE_SHARDS }, (_, shard) =>
      engine.send({ service: 'WakeScheduler', handler: 'nudge', key: String(shard), input: { atMs: null } }, { idempotencyKey: `${idempotencyKey}:${shard}` }),
    ),
  );
}

/**
 * The schedulers' listener (one per workflows process): a row scheduled earlier than its shard's armed timer makes
 * wake_schedule notify `wake_earlier` with the shard, and the shard's scheduler is nudged so that its timer moves
 * there. Nudges of one shard that arrive while one is on its way are sent once more after it, not once each. A
 * reconnect of the listener nudges every shard, since a notification may have been missed meanwhile. Two processes
 * listening nudge twice, which changes nothing: a nudge only ever moves a timer earlier.
 */
export async function listenForEarlierWakes(
  db: Db,
  ingressUrl: string,
  log: (level: 'warn', msg: string, fields: Record<string, unknown>) => void,
): Promise<() => Promise<void>> {
  const engine = createEngineClient(ingressUrl);
  const sending = new Map<number, boolean>();
  const nudge = (shard: number): void => {
    if (sending.has(shard)) {
      sending.set(shard, true);
      return;
    }
    sending.set(shard, false);
    engine
      .send({ service: 'WakeScheduler', handler: 'nudge', key: String(shard), input: { atMs: null } })
      .catch((err: unknown) => log('warn', 'a wake shard could not be nudged; the housekeeping backstop finds its rows', { shard, err: String(err) }))
      .finally(() => {
        const again = sending.get(shard);
        sending.delete(shard);
        if (again) nudge(shard);
      });
  };
  const all = () => {
    for (let shard = 0; shard < WAKE_SHARDS; shard++) nudge(shard);
  };
  const sub = await db.sql.listen('wake_earlier', (payload) => nudge(Number(payload)), all);
  return () => sub.unlisten();
}
