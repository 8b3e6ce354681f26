import type { Subscription } from '../../../contracts/subscriptions.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Queryable } from '../../shared/db.ts';
import { isUuid } from '../../shared/ids.ts';
import { transitionSubscription } from '../../subscriptions/transition-subscription.ts';
import type { PortalSession } from './portal-session.ts';

export type PortalSubscriptionAction = 'pause' | 'resume' | 'cancel';
export const PORTAL_SUBSCRIPTION_ACTIONS: readonly PortalSubscriptionAction[] = ['pause', 'resume', 'cancel'];

/**
 * A debtor pauses, resumes or cancels one of their subscriptions (self-service). The change is the one
 * POST /v1/subscriptions/{id}/{pause|resume|cancel} makes, in the caller's transaction: the same guarded status
 * change, event and schedule (wake-index) rows. Undefined when the subscription is not one of the session's
 * customers'; a status the lifecycle does not allow throws 422 invalid_transition, as in the API.
 */
export async function changePortalSubscription(
  sql: Queryable,
  deps: { clock: Clock },
  organizationId: string,
  session: PortalSession,
  subscriptionId: string,
  action: PortalSubscriptionAction,
): Promise<Subscription | undefined> {
  if (!isUuid(subscriptionId)) return undefined;
  const [owner] = await sql<{ customer_id: string }[]>`
    SELECT customer_id FROM subscriptions WHERE organization_id = ${organizationId} AND id = ${subscriptionId}`;
  if (!owner || !session.customers.some((c) => c.id === owner.customer_id)) return undefined;
  const today = await deps.clock.today(organizationId);
  return transitionSubscription(sql, organizationId, subscriptionId, action, today);
}
