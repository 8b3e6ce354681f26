import type { ReplayResult } from '../../contracts/webhooks.ts';
import { addDays, copenhagenToday, type Clock } from '../shared/clock.ts';
import type { Tx } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { sinceInstant } from '../events/since.ts';
import { findEndpointOrThrow } from './endpoint-queries.ts';
import { replayDeliveries } from './delivery-store.ts';

/** Replay reaches back 90 days, counted in whole days: from midnight (Europe/Copenhagen) 90 days before today. */
export const REPLAY_HORIZON_DAYS = 90;

/**
 * `POST /v1/webhook-endpoints/{id}/replay`. The endpoint row is locked, so two replays of one endpoint apply one
 * after the other (the second finds what the first queued already queued). An inactive endpoint's replayed
 * deliveries wait, queued, until it is reactivated.
 */
export async function replayEndpoint(tx: Tx, clock: Clock, organizationId: string, endpointId: string, since: string, realNow: Date = new Date()): Promise<ReplayResult> {
  const endpoint = await findEndpointOrThrow(tx, organizationId, endpointId, { lock: true });
  const from = sinceInstant(since);
  const earliest = sinceInstant(addDays(copenhagenToday(realNow), -REPLAY_HORIZON_DAYS));
  if (from < earliest) {
    throw new DomainError('replay_window_exceeded', `A replay reaches back at most ${REPLAY_HORIZON_DAYS} days, to ${earliest.toISOString()}.`, {
      details: [{ path: '/since', message: `must not be earlier than ${earliest.toISOString()}` }],
    });
  }
  return replayDeliveries(tx, clock, organizationId, endpoint, from);
}
