import type { SubscriptionPatch } from '../../contracts/subscriptions.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { updateSubscription } from './update-subscription.ts';
import { pokeScheduleIfDue, type SubscriptionChangeDeps } from './poke-schedule-if-due.ts';

/** PATCH /v1/subscriptions/{id}: the change (updateSubscription); one that made a period due has the schedule poked. */
export function changeSubscription(deps: SubscriptionChangeDeps, organizationId: string, id: string, patch: SubscriptionPatch): MutationUseCase {
  return async (tx) => {
    const today = await deps.clock.today(organizationId);
    const subscription = await updateSubscription(tx, organizationId, id, patch, today);
    return { status: 200, data: subscription, ...pokeScheduleIfDue(deps.engine, organizationId, subscription, today) };
  };
}
