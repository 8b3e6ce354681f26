import type { EventEnvelope } from '../../contracts/events.ts';
import type { Clock } from '../shared/clock.ts';
import type { Tx } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { findEndpointOrThrow } from './endpoint-queries.ts';
import { queuePing } from './delivery-store.ts';

/**
 * `POST /v1/webhook-endpoints/{id}/test`: queues a ping (type `webhook.ping`, empty data) for this endpoint only,
 * signed and retried like any delivery. An inactive endpoint receives nothing, so it cannot be pinged either.
 */
export async function sendTestPing(tx: Tx, clock: Clock, organizationId: string, endpointId: string): Promise<EventEnvelope> {
  const endpoint = await findEndpointOrThrow(tx, organizationId, endpointId, { lock: true });
  if (!endpoint.active) {
    throw new DomainError('webhook_endpoint_inactive', 'The endpoint is inactive and receives nothing; activate it first.');
  }
  return queuePing(tx, clock, organizationId, endpointId);
}
