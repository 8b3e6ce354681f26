import * as restate from '@restatedev/restate-sdk';
import { WORKFLOW_SERVICES, type HousekeepingJob } from '../contracts/workflows.ts';
import { arm, disarm, isStaleWake, RETENTION, RETRY, type ArmedTimer } from './shared/durable.ts';
import { nudgeShard } from './shared/wake-claim.ts';

/**
 * The one durable housekeeping loop, one virtual object key per job. Restate has no cron, so each run arms the next
 * with a delayed self-send (the armed-timer pattern of shared/durable.ts):
 *
 * - `idempotency`, daily: purges stored idempotent responses past their retention.
 * - `due-work`, every minute: the backstop of the wake index, not the way due work starts (each shard's scheduler
 *   starts it on time, workflows/wake-scheduler.ts). It releases claims whose invocation was lost (the engine no
 *   longer has it, or older than the lease), nudges the scheduler of every shard with rows due for more than a minute and not handed on (a lost
 *   hand-off, timer or notification), and drains the event outbox. (The job was called `lost-work` before; see
 *   RETIRED_JOBS.)
 *
 * Invariant: at most one armed wake-up per job. `start` on an armed job is a no-op, so every boot of every replica
 * may send it.
 */
export const HOUSEKEEPING = WORKFLOW_SERVICES.Housekeeping;
export const IDEMPOTENCY_JOB = 'idempotency' satisfies HousekeepingJob;
export const DUE_WORK_JOB = 'due-work' satisfies HousekeepingJob;

/** The idempotency purge's period. */
export const RUN_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** After a run whose job failed every retry, the next attempt comes sooner than a day. */
export const RETRY_INTERVAL_MS = 60 * 60 * 1000;
/**
 * An armed wake-up of the daily job this late has been lost (an operator killed it): `start` then runs the job and
 * re-arms. A wake that is merely late (endpoint down, Restate retrying) holds the key, so `start` waits behind it.
 */
export const OVERDUE_AFTER_MS = 60 * 60 * 1000;
/** The minute jobs' period, and how long a wake-index row may be due before the due-work job wakes it. */
export const MINUTE_MS = 60 * 1000;
export const DUE_WORK_GRACE_MS = MINUTE_MS;

/**
 * Keys of jobs that were renamed or retired: `due-work` was called `lost-work`; `past-due` became each organisation's
 * PastDue wake-index row (workflows/past-due.ts). Restate keeps a key's state and its armed wake-up across restarts,
 * so a deployment from before still has that wake-up coming; it clears the old key's state and arms nothing.
 */
export const RETIRED_JOBS: readonly string[] = ['lost-work', 'past-due'];

export interface HousekeepingActivities {
  /** Deletes stored idempotent responses older than the retention; returns how many. */
  purgeIdempotencyKeys(): Promise<number>;
  /** Releases lost claims and answers the shards with rows due for more than `graceMs` and not handed on. */
  shardsWithLostWork(graceMs: number): Promise<number[]>;
  /** Hands on whatever the event outbox still holds (the relay's own work, when a notification was lost). */
  drainEventOutbox(): Promise<void>;
}

export interface HousekeepingState extends ArmedTimer {
  gen: number;
  nextRunAt: number | null;
  lastRunAt: number | null;
  /**
   * What the last successful run counted: stored responses purged (`idempotency`), shards nudged (`due-work`). State
   * stored before this field was named so holds it as `lastDeleted`.
   */
  lastRunCount: number | null;
  lastError: string | null;
}

export interface WakeRequest {
  gen: number;
}

export type RunResult = { ran: true; count: number | null; nextRunAt: number } | { ran: false; reason: 'already_armed' | 'stale_wake'; nextRunAt: number | null };

type HousekeepingContext = restate.ObjectContext<{ s: HousekeepingState }>;

interface Job {
  intervalMs: number;
  retryMs: number;
  overdueAfterMs: number;
  /** The run; its steps are journaled. Throws a TerminalError when it gave up. */
  run(ctx: HousekeepingContext): Promise<number>;
}

const initialState = (): HousekeepingState => ({
  gen: 0,
  pendingWake: null,
  nextRunAt: null,
  lastRunAt: null,
  lastRunCount: null,
  lastError: null,
});

/** The stored state, with a count stored under its former name (`lastDeleted`) read as `lastRunCount`. */
function stateOf(stored: (HousekeepingState & { lastDeleted?: number | null }) | null): HousekeepingState | null {
  if (stored === null || !('lastDeleted' in stored)) return stored;
  const { lastDeleted, ...s } = stored;
  return { ...s, lastRunCount: s.lastRunCount ?? lastDeleted ?? null };
}

export function createHousekeeping(activities: HousekeepingActivities) {
  const jobs: Record<HousekeepingJob, Job> = {
    idempotency: {
      intervalMs: RUN_INTERVAL_MS,
      retryMs: RETRY_INTERVAL_MS,
      overdueAfterMs: OVERDUE_AFTER_MS,
      // Bounded retries: a database that stays down must not pause the object, because a paused invocation would
      // hold the key and arm nothing, and the job would never run again without an operator.
      run: (ctx) => ctx.run('run-job', () => activities.purgeIdempotencyKeys(), RETRY.job),
    },
    'due-work': {
      intervalMs: MINUTE_MS,
      retryMs: MINUTE_MS,
      overdueAfterMs: 5 * MINUTE_MS,
      run: async (ctx) => {
        const shards = await ctx.run('lost-work', () => activities.shardsWithLostWork(DUE_WORK_GRACE_MS), RETRY.job);
        for (const shard of shards) nudgeShard(ctx, shard);
        await ctx.run('drain-event-outbox', () => activities.drainEventOutbox(), RETRY.job);
        return shards.length;
      },
    },
  };

  const jobOf = (ctx: HousekeepingContext): Job => {
    const job = Object.hasOwn(jobs, ctx.key) ? jobs[ctx.key as HousekeepingJob] : undefined;
    if (!job) throw new restate.TerminalError(`No housekeeping job is called "${ctx.key}".`, { errorCode: 404 });
    return job;
  };

  /** Runs the job once, then arms exactly one wake-up for the next run. */
  async function runAndArm(ctx: HousekeepingContext, s: HousekeepingState, job: Job): Promise<RunResult> {
    let count: number | null = null;
    try {
      count = await job.run(ctx);
      s.lastRunCount = count;
      s.lastError = null;
    } catch (err) {
      if (!(err instanceof restate.TerminalError)) throw err;
      s.lastError = err.message;
      ctx.console.warn(`housekeeping job ${ctx.key} gave up after its retries: ${err.message}`);
    }
    const now = await ctx.date.now();
    const delay = s.lastError === null ? job.intervalMs : job.retryMs;
    s.gen += 1;
    await arm(ctx, s, { service: 'Housekeeping', handler: 'wake', input: { gen: s.gen } }, delay);
    s.lastRunAt = now;
    s.nextRunAt = now + delay;
    ctx.set('s', s);
    return { ran: true, count, nextRunAt: s.nextRunAt };
  }

  return restate.object({
    name: HOUSEKEEPING,
    options: RETENTION,
    handlers: {
      /** Runs the job now and arms the schedule, unless it is armed already. Called at every start-up. */
      start: async (ctx: HousekeepingContext): Promise<RunResult> => {
        const job = jobOf(ctx);
        const s = stateOf(await ctx.get('s')) ?? initialState();
        if (s.pendingWake !== null) {
          const now = await ctx.date.now();
          if (s.nextRunAt !== null && now < s.nextRunAt + job.overdueAfterMs) {
            return { ran: false, reason: 'already_armed', nextRunAt: s.nextRunAt };
          }
          disarm(ctx, s);
        }
        return runAndArm(ctx, s, job);
      },

      /** Target of the delayed self-send. */
      wake: async (ctx: HousekeepingContext, req: WakeRequest): Promise<RunResult> => {
        if (RETIRED_JOBS.includes(ctx.key)) {
          // Read the state first, as the retired job's own wake did: an invocation of it still in flight when this
          // code takes over replays a journal that begins with that read, and must not meet a mismatch.
          await ctx.get('s');
          ctx.clearAll();
          return { ran: false, reason: 'stale_wake', nextRunAt: null };
        }
        const job = jobOf(ctx);
        const s = stateOf(await ctx.get('s'));
        if (!s || req?.gen === undefined || isStaleWake(s.gen, req.gen)) return { ran: false, reason: 'stale_wake', nextRunAt: s?.nextRunAt ?? null };
        // Normally this invocation is the armed wake-up itself. Called by hand with the current generation, it
        // supersedes the armed one, which is cancelled so that only the wake-up armed below remains.
        disarm(ctx, s);
        return runAndArm(ctx, s, job);
      },

      /** Operator lever (Restate UI or CLI): run now and restart the schedule from now. */
      runNow: async (ctx: HousekeepingContext): Promise<RunResult> => {
        const job = jobOf(ctx);
        const s = stateOf(await ctx.get('s')) ?? initialState();
        disarm(ctx, s);
        return runAndArm(ctx, s, job);
      },

      status: restate.handlers.object.shared(
        async (ctx: restate.ObjectSharedContext<{ s: HousekeepingState }>): Promise<HousekeepingState> => {
          return stateOf(await ctx.get('s')) ?? initialState();
        },
      ),
    },
  });
}

export type Housekeeping = ReturnType<typeof createHousekeeping>;
