import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { transitionSubscription } from './transition-subscription.ts';
import { pokeScheduleIfDue, type SubscriptionChangeDeps } from './poke-schedule-if-due.ts';

/**
 * POST /v1/subscriptions/{id}/{pause|resume|cancel} (transitionSubscription); a resume whose next period is due has the
 * schedule poked.
 */
export function pauseResumeOrCancel(
  deps: SubscriptionChangeDeps,
  organizationId: string,
  id: string,
  transition: Parameters<typeof transitionSubscription>[3],
): MutationUseCase {
  return async (tx) => {
    const today = await deps.clock.today(organizationId);
    const subscription = await transitionSubscription(tx, organizationId, id, transition, today);
    return { status: 200, data: subscription, ...(transition === 'resume' ? pokeScheduleIfDue(deps.engine, organizationId, subscription, today) : {}) };
  };
}
