import { WORK } from '../../contracts/workflows.ts';
import type { Clock } from '../shared/clock.ts';
import type { EngineClient } from '../shared/engine-client.ts';
import type { MutationResult } from '../idempotency/run-mutation.ts';

/**
 * After a commit that may have made a period due (create, PATCH, resume): the schedule's wake-index row is then due,
 * so it is poked at once; a lost poke only delays the run until the BusinessClock or the housekeeping loop wakes it.
 */
export const pokeScheduleIfDue = (
  engine: Pick<EngineClient, 'poke'> | undefined,
  organizationId: string,
  s: { id: string; nextInvoiceDate: string | null },
  today: string,
): Pick<MutationResult, 'afterCommit'> =>
  engine && s.nextInvoiceDate !== null && s.nextInvoiceDate <= today
    ? { afterCommit: () => engine.poke(WORK.subscriptionSchedule(organizationId, s.id)) }
    : {};

/** What a subscription change that may make a period due needs: the business today, and the engine to poke. */
export interface SubscriptionChangeDeps {
  clock: Pick<Clock, 'today'>;
  engine?: Pick<EngineClient, 'poke'> | undefined;
}
