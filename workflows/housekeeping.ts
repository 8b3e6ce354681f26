import * as restate from '@restatedev/restate-sdk';

/**
 * Periodic clean-up jobs, one virtual object key per job ("idempotency": purge stored idempotent responses past
 * their retention). Restate has no cron, so each run arms the next with a delayed self-send (guide §3.0/§3.1).
 *
 * Invariant: at most one armed wake-up per job. Every armed `wake` carries the generation it was armed with; a wake
 * whose generation is not the current one is stale and does nothing, and `start` on an armed job is a no-op. The
 * exclusive handlers of a key never overlap, so the state below needs no other lock.
 */
export const HOUSEKEEPING = 'Housekeeping';
export const IDEMPOTENCY_JOB = 'idempotency';

export const RUN_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** After a run whose job failed every retry, the next attempt comes sooner than a day. */
export const RETRY_INTERVAL_MS = 60 * 60 * 1000;
/**
 * An armed wake-up this late has been lost (an operator killed it): `start` then runs the job and re-arms. A wake
 * that is merely late (endpoint down, Restate retrying) holds the key, so `start` waits behind it instead.
 */
export const OVERDUE_AFTER_MS = 60 * 60 * 1000;

export interface HousekeepingActivities {
  /** Deletes stored idempotent responses older than the retention; returns how many. */
  purgeIdempotencyKeys(): Promise<number>;
}

export interface HousekeepingState {
  gen: number;
  /** Invocation id of the armed wake-up; null while none is armed. */
  pendingWake: string | null;
  nextRunAt: number | null;
  lastRunAt: number | null;
  /** Rows removed by the last successful run. */
  lastDeleted: number | null;
  lastError: string | null;
}

export interface WakeRequest {
  gen: number;
}

export type RunResult = { ran: true; deleted: number | null; nextRunAt: number } | { ran: false; reason: 'already_armed' | 'stale_wake'; nextRunAt: number | null };

type HousekeepingContext = restate.ObjectContext<{ s: HousekeepingState }>;

// The object sends to itself; its own definition cannot be named inside its initializer, so the target is typed here.
type SelfTarget = { wake: (ctx: restate.ObjectContext, req: WakeRequest) => Promise<RunResult> };

const initialState = (): HousekeepingState => ({
  gen: 0,
  pendingWake: null,
  nextRunAt: null,
  lastRunAt: null,
  lastDeleted: null,
  lastError: null,
});

export function createHousekeeping(activities: HousekeepingActivities) {
  const jobs: Record<string, () => Promise<number>> = {
    [IDEMPOTENCY_JOB]: () => activities.purgeIdempotencyKeys(),
  };

  const jobOf = (ctx: HousekeepingContext): (() => Promise<number>) => {
    const job = Object.hasOwn(jobs, ctx.key) ? jobs[ctx.key] : undefined;
    if (!job) throw new restate.TerminalError(`No housekeeping job is called "${ctx.key}".`, { errorCode: 404 });
    return job;
  };

  /** Runs the job once, then arms exactly one wake-up for the next run. */
  async function runAndArm(ctx: HousekeepingContext, s: HousekeepingState, job: () => Promise<number>): Promise<RunResult> {
    let deleted: number | null = null;
    try {
      // Bounded retries (about half a minute): a database that stays down must not pause the object, because a paused
      // invocation would hold the key and arm nothing, and the job would never run again without an operator.
      deleted = await ctx.run('run-job', job, { maxRetryAttempts: 10, maxRetryInterval: { seconds: 10 } });
      s.lastDeleted = deleted;
      s.lastError = null;
    } catch (err) {
      if (!(err instanceof restate.TerminalError)) throw err;
      s.lastError = err.message;
    }
    const now = await ctx.date.now();
    const delay = s.lastError === null ? RUN_INTERVAL_MS : RETRY_INTERVAL_MS;
    s.gen += 1;
    const handle = ctx
      .objectSendClient<SelfTarget>({ name: HOUSEKEEPING }, ctx.key)
      .wake({ gen: s.gen }, restate.rpc.sendOpts({ delay }));
    s.pendingWake = await handle.invocationId;
    s.lastRunAt = now;
    s.nextRunAt = now + delay;
    ctx.set('s', s);
    return { ran: true, deleted, nextRunAt: s.nextRunAt };
  }

  return restate.object({
    name: HOUSEKEEPING,
    handlers: {
      /** Runs the job now and arms the schedule, unless it is armed already. Called at every start-up. */
      start: async (ctx: HousekeepingContext): Promise<RunResult> => {
        const job = jobOf(ctx);
        const s = (await ctx.get('s')) ?? initialState();
        if (s.pendingWake !== null) {
          const now = await ctx.date.now();
          if (s.nextRunAt !== null && now < s.nextRunAt + OVERDUE_AFTER_MS) {
            return { ran: false, reason: 'already_armed', nextRunAt: s.nextRunAt };
          }
          ctx.invocation(restate.InvocationIdParser.fromString(s.pendingWake)).cancel();
          s.pendingWake = null;
        }
        return runAndArm(ctx, s, job);
      },

      /** Target of the delayed self-send. */
      wake: async (ctx: HousekeepingContext, req: WakeRequest): Promise<RunResult> => {
        const job = jobOf(ctx);
        const s = await ctx.get('s');
        if (!s || req?.gen !== s.gen) return { ran: false, reason: 'stale_wake', nextRunAt: s?.nextRunAt ?? null };
        // Normally this invocation is the armed wake-up itself. Called by hand with the current generation, it
        // supersedes the armed one, which is cancelled so that only the wake-up armed below remains.
        if (s.pendingWake !== null && s.pendingWake !== ctx.request().id) {
          ctx.invocation(restate.InvocationIdParser.fromString(s.pendingWake)).cancel();
        }
        s.pendingWake = null;
        return runAndArm(ctx, s, job);
      },

      /** Operator lever (Restate UI or CLI): run now and restart the schedule from now. */
      runNow: async (ctx: HousekeepingContext): Promise<RunResult> => {
        const job = jobOf(ctx);
        const s = (await ctx.get('s')) ?? initialState();
        // The generation bump in runAndArm already makes the old wake-up stale; cancelling it keeps the timer table
        // free of wake-ups that would only be ignored.
        if (s.pendingWake !== null) ctx.invocation(restate.InvocationIdParser.fromString(s.pendingWake)).cancel();
        s.pendingWake = null;
        return runAndArm(ctx, s, job);
      },

      status: restate.handlers.object.shared(
        async (ctx: restate.ObjectSharedContext<{ s: HousekeepingState }>): Promise<HousekeepingState> => {
          return (await ctx.get('s')) ?? initialState();
        },
      ),
    },
  });
}

export type Housekeeping = ReturnType<typeof createHousekeeping>;
