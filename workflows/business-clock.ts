import * as restate from '@restatedev/restate-sdk';
import { WORKFLOW_SERVICES } from '../contracts/workflows.ts';
import type { WakeRef } from '../services/clock/wake-index.ts';
import { RETRY } from './shared/durable.ts';

/**
 * The wake-up fan-out of one organisation's business clock (key: organisation id). After a test clock advance, or
 * when the housekeeping loop finds the organisation's rows overdue, it reads the wake index page by page for every
 * row that is due by the organisation's business time and pokes each row's handler. The handlers decide on
 * business time themselves, so a poke that arrives early only re-arms, and a repeated one does nothing twice.
 */
export const BUSINESS_CLOCK = WORKFLOW_SERVICES.BusinessClock;

export type { WakeRef };

export interface BusinessClockActivities {
  dueWakeUps(organizationId: string, after: WakeRef | null, limit: number): Promise<WakeRef[]>;
}

const PAGE = 500;

export function createBusinessClock(activities: BusinessClockActivities) {
  return restate.object({
    name: BUSINESS_CLOCK,
    handlers: {
      wakeDue: async (ctx: restate.ObjectContext): Promise<{ woken: number }> => {
        let after: WakeRef | null = null;
        let woken = 0;
        for (let page = 0; ; page++) {
          const from: WakeRef | null = after;
          const due: WakeRef[] = await ctx.run(`due-${page}`, (): Promise<WakeRef[]> => activities.dueWakeUps(ctx.key, from, PAGE), RETRY.database);
          // The row names its handler; every handler listed in the wake index takes a poke (an empty object).
          for (const w of due) ctx.genericSend({ service: w.service, method: w.handler, key: w.key, parameter: {}, inputSerde: restate.serde.json });
          woken += due.length;
          if (due.length < PAGE) return { woken };
          after = due[due.length - 1]!;
        }
      },
    },
  });
}

export type BusinessClockObject = ReturnType<typeof createBusinessClock>;
