import type { Subscription } from '../../contracts/subscriptions.ts';
import type { Queryable } from '../shared/db.ts';
import { getSubscriptionRowOrThrow, toSubscription } from './subscription-queries.ts';

/** GET /v1/subscriptions/{id}. An unknown id, another organisation's and one that is not a UUID are the same 404. */
export async function getSubscription(sql: Queryable, organizationId: string, id: string, today: string): Promise<Subscription> {
  return toSubscription(await getSubscriptionRowOrThrow(sql, organizationId, id), today);
}
