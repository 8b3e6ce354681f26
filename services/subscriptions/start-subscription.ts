import type { SubscriptionCreate } from '../../contracts/subscriptions.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { createSubscription } from './create-subscription.ts';
import { pokeScheduleIfDue, type SubscriptionChangeDeps } from './poke-schedule-if-due.ts';

/** POST /v1/subscriptions: the subscription (createSubscription); a start today or earlier has its schedule poked. */
export function startSubscription(deps: SubscriptionChangeDeps, organizationId: string, body: SubscriptionCreate): MutationUseCase {
  return async (tx) => {
    const today = await deps.clock.today(organizationId);
    const subscription = await createSubscription(tx, organizationId, body, today);
    return {
      status: 201,
      data: subscription,
      location: `/v1/subscriptions/${subscription.id}`,
      ...pokeScheduleIfDue(deps.engine, organizationId, subscription, today),
    };
  };
}
