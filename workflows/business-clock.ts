import * as restate from '@restatedev/restate-sdk';
import { RETENTION } from './shared/durable.ts';
import { WORKFLOW_SERVICES } from '../contracts/workflows.ts';
import { wakeShardOf } from '../services/clock/wake-index.ts';
import { nudgeShard } from './shared/wake-claim.ts';

/**
 * One organisation's business clock (key: organisation id), woken after a test clock advance, a replay, a
 * reactivation or a reminder-settings change. It asks the scheduler of the organisation's wake shard to run now
 * (workflows/wake-scheduler.ts), which claims every row that the advance made due, fairly beside the other
 * organisations of the shard, and sends each to its handler. It keeps no state and reads nothing itself.
 */
export const BUSINESS_CLOCK = WORKFLOW_SERVICES.BusinessClock;

export function createBusinessClock() {
  return restate.object({
    name: BUSINESS_CLOCK,
    options: RETENTION,
    handlers: {
      wakeDue: async (ctx: restate.ObjectContext): Promise<{ shard: number }> => {
        const shard = wakeShardOf(ctx.key);
        nudgeShard(ctx, shard);
        return { shard };
      },
    },
  });
}

export type BusinessClockObject = ReturnType<typeof createBusinessClock>;
