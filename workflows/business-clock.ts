import * as restate from '@restatedev/restate-sdk';

/**
 * The wake-up fan-out of one organisation's business clock (key: organisation id). After a test clock advance (or
 * a replay, a reactivation, the overdue sweep) it reads the wake index for every pending timed step that is due by
 * the organisation's business time and pokes each one's `wake` handler. The steps themselves decide on business
 * time, so a poke that arrives early only re-arms.
 */
export const BUSINESS_CLOCK = 'BusinessClock';

export interface WakeRef {
  service: string;
  key: string;
}

export interface BusinessClockActivities {
  dueWakeUps(organizationId: string, after: WakeRef | null, limit: number): Promise<WakeRef[]>;
}

const PAGE = 500;

type WakeTarget = { wake: (ctx: restate.ObjectContext, req: Record<string, never>) => Promise<unknown> };

export function createBusinessClock(activities: BusinessClockActivities) {
  return restate.object({
    name: BUSINESS_CLOCK,
    handlers: {
      wakeDue: async (ctx: restate.ObjectContext): Promise<{ woken: number }> => {
        let after: WakeRef | null = null;
        let woken = 0;
        for (let page = 0; ; page++) {
          const from: WakeRef | null = after;
          const due: WakeRef[] = await ctx.run(`due-${page}`, (): Promise<WakeRef[]> => activities.dueWakeUps(ctx.key, from, PAGE));
          for (const w of due) ctx.objectSendClient<WakeTarget>({ name: w.service }, w.key).wake({});
          woken += due.length;
          if (due.length < PAGE) return { woken };
          after = due[due.length - 1]!;
        }
      },
    },
  });
}

export type BusinessClockObject = ReturnType<typeof createBusinessClock>;
