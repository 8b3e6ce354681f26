import * as restate from '@restatedev/restate-sdk';
import type { WakeClaim, WorkTarget } from '../../contracts/workflows.ts';
import { wakeShardOf } from '../../services/clock/wake-index.ts';
import { RETRY, sendTo } from './durable.ts';

/**
 * The two things every handler of a wake-index target does besides its work (docs/architecture.md, "Time-driven
 * work"): it releases the claim it was sent when it finishes, and it hands work it made due to the scheduler instead
 * of calling other handlers itself. Both keep the rule that a row has at most one invocation in flight or queued:
 * only a claimer sends, and a claim is released only by the invocation it names.
 */

export interface WakeClaimActivities {
  /**
   * Releases the claim (a call without one only reads the row) and answers whether to nudge the row's shard
   * scheduler, and for when; null when the row is gone or the claim was not this one's.
   */
  releaseWake(target: { service: string; key: string }, token: number | null): Promise<{ shard: number; nudgeAtMs: number | null } | null>;
}

/** Asks a shard's scheduler to run by `atMs` (now when null): it claims and sends what is due there, fairly. */
export function nudgeShard(ctx: Pick<restate.Context, 'genericSend'>, shard: number, atMs: number | null = null): void {
  sendTo(ctx, { service: 'WakeScheduler', handler: 'nudge', key: String(shard), input: { atMs } });
}

/** Hands on work this handler made due for the organisation (a queued mail, a case, a sibling's step). */
export function handOn(ctx: Pick<restate.Context, 'genericSend'>, organizationId: string): void {
  nudgeShard(ctx, wakeShardOf(organizationId));
}

/**
 * Wraps a wake-index target's handler: after the work (or a business refusal, which ends the invocation), one
 * `release` step gives the claim back and, when the row is due again, earlier than its shard's timer, or its
 * organisation has due rows waiting for a slot, nudges the shard's scheduler. A retryable error releases nothing:
 * the invocation is still the row's, Restate retries it. A handler that continues in a fresh invocation (many steps
 * at once) leaves its row due and lets the release hand it on.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the object's state type, whatever it is
export function releasing<Ctx extends restate.ObjectContext<any>, Req extends WakeClaim, R>(
  service: WorkTarget['service'],
  activities: WakeClaimActivities,
  fn: (ctx: Ctx, req?: Req) => Promise<R>,
): (ctx: Ctx, req?: Req) => Promise<R> {
  const release = async (ctx: Ctx, req?: Req): Promise<void> => {
    const token = typeof req?.claim === 'number' ? req.claim : null;
    const released = await ctx.run('release', () => activities.releaseWake({ service, key: ctx.key }, token), RETRY.database);
    if (released && released.nudgeAtMs !== null) nudgeShard(ctx, released.shard, released.nudgeAtMs);
  };
  return async (ctx, req) => {
    let result: R;
    try {
      result = await fn(ctx, req);
    } catch (err) {
      if (err instanceof restate.TerminalError) await release(ctx, req);
      throw err;
    }
    await release(ctx, req);
    return result;
  };
}
