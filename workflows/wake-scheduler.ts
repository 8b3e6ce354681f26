import * as restate from '@restatedev/restate-sdk';
import { WORKFLOW_SERVICES } from '../contracts/workflows.ts';
import type { ClaimedWake } from '../services/clock/wake-index.ts';
import { arm, disarm, isStaleWake, RETENTION, RETRY, type ArmedTimer } from './shared/durable.ts';

/**
 * The scheduler of one shard of the wake index (key: the shard, "0".."7"; services/clock/wake-index.ts). It is how
 * due work starts on time: one armed timer to the shard's earliest row. When it fires (`tick`), the scheduler claims
 * the rows that are due, fairly across organisations, sends each claimed row's handler `{ claim }`, and arms the timer
 * for the next earliest row. `nudge` moves the timer earlier: a handler that finished with its row due again or
 * rescheduled, an organisation's test clock advance (its BusinessClock), a row scheduled earlier than the armed timer
 * (the schedulers' listener of `wake_earlier`), the housekeeping loop's backstop, and every start-up.
 *
 * Crash story: the claims and the sends are journaled, so a tick that is retried after a crash sends what it claimed
 * once. A claim whose send never happened (the invocation was killed between the two) stays until the lease runs out
 * and the backstop releases it. The timer is one delayed self-call with a generation; a superseded one does nothing.
 * With nothing due, a tick reads two index ranges that stop at now, whatever waits behind them.
 */
export const WAKE_SCHEDULER = WORKFLOW_SERVICES.WakeScheduler;

/** Rows claimed per step; a tick takes at most PAGES of them, then continues in a fresh invocation. */
export const PAGE = 500;
export const PAGES = 10;
/**
 * While due rows wait for their organisation's in-flight rows to finish, the scheduler looks again this soon (their
 * handlers' releases nudge it sooner). The timer is never armed further out than MAX_SLEEP_MS: a guard against a
 * lost notification, not the way due work starts.
 */
export const BACKLOG_RETRY_MS = 1000;
export const MAX_SLEEP_MS = 60 * 60 * 1000;
/** A nudge for a moment this close to the armed timer leaves it alone. */
export const NUDGE_SLACK_MS = 50;

export interface WakeSchedulerActivities {
  /** Claims up to `limit` due rows of the shard, fairly across organisations. */
  claimDueWakes(shard: number, limit: number): Promise<ClaimedWake[]>;
  /** The real time (epoch ms) of the shard's earliest unclaimed row, null when none; records `capMs` or it as armed. */
  armShard(shard: number, capMs: number): Promise<number | null>;
}

interface SchedulerState extends ArmedTimer {
  gen: number;
  /** When the armed timer fires (epoch ms); null while none is armed. */
  armedAt: number | null;
}

export type TickResult = { ignored: 'stale' } | { sent: number; nextAt: number | null };

type SchedulerContext = restate.ObjectContext<{ s: SchedulerState }>;

/** Where the timer goes after a tick: pure, tested from a table (test/unit/wake-scheduler.test.ts). */
export function nextTimer(now: number, earliest: number | null, morePages: boolean): number | null {
  if (morePages) return now;
  if (earliest === null) return null;
  // A due row left unclaimed waits for its organisation's in-flight rows: look again shortly, not in a spin.
  if (earliest <= now) return now + BACKLOG_RETRY_MS;
  return Math.min(earliest, now + MAX_SLEEP_MS);
}

export function createWakeScheduler(activities: WakeSchedulerActivities) {
  const shardOf = (ctx: SchedulerContext): number => {
    const shard = Number(ctx.key);
    if (!Number.isInteger(shard) || shard < 0 || shard > 7 || String(shard) !== ctx.key) {
      throw new restate.TerminalError(`No wake shard is called "${ctx.key}".`, { errorCode: 404 });
    }
    return shard;
  };

  async function armAt(ctx: SchedulerContext, s: SchedulerState, at: number | null): Promise<void> {
    if (at === null) {
      disarm(ctx, s);
      s.armedAt = null;
      return;
    }
    const now = await ctx.date.now();
    s.gen += 1;
    await arm(ctx, s, { service: 'WakeScheduler', handler: 'tick', input: { gen: s.gen } }, at - now);
    s.armedAt = at;
  }

  return restate.object({
    name: WAKE_SCHEDULER,
    options: RETENTION,
    handlers: {
      /** The armed timer (with its generation), or a run now (without). */
      tick: async (ctx: SchedulerContext, req: { gen?: number } | null): Promise<TickResult> => {
        const shard = shardOf(ctx);
        const s = (await ctx.get('s')) ?? { gen: 0, pendingWake: null, armedAt: null };
        if (isStaleWake(s.gen, req?.gen)) return { ignored: 'stale' };
        disarm(ctx, s);
        s.armedAt = null;
        let sent = 0;
        let morePages = false;
        for (let page = 0; page < PAGES; page++) {
          const claimed = await ctx.run(`claim-${page}`, () => activities.claimDueWakes(shard, PAGE), RETRY.database);
          for (const w of claimed) {
            ctx.genericSend({ service: w.service, method: w.handler, key: w.key, parameter: { claim: w.token }, inputSerde: restate.serde.json });
          }
          sent += claimed.length;
          morePages = claimed.length === PAGE && page === PAGES - 1;
          if (claimed.length < PAGE) break;
        }
        const now = await ctx.date.now();
        const earliest = await ctx.run('arm', () => activities.armShard(shard, now + MAX_SLEEP_MS), RETRY.database);
        const at = nextTimer(now, earliest, morePages);
        await armAt(ctx, s, at);
        ctx.set('s', s);
        return { sent, nextAt: at };
      },

      /** Makes sure a tick runs by `atMs` (now when null): moves the armed timer earlier, never later. */
      nudge: async (ctx: SchedulerContext, req: { atMs?: number | null } | null): Promise<{ armedAt: number | null }> => {
        shardOf(ctx);
        const s = (await ctx.get('s')) ?? { gen: 0, pendingWake: null, armedAt: null };
        const now = await ctx.date.now();
        const at = Math.max(now, req?.atMs ?? now);
        if (s.armedAt !== null && s.armedAt <= at + NUDGE_SLACK_MS) return { armedAt: s.armedAt };
        await armAt(ctx, s, at);
        ctx.set('s', s);
        return { armedAt: s.armedAt };
      },
    },
  });
}

export type WakeSchedulerObject = ReturnType<typeof createWakeScheduler>;
