import type { EventEnvelope } from '../../contracts/events.ts';
import type { Clock } from '../shared/clock.ts';
import type { Tx } from '../shared/db.ts';
import { findEndpointOrThrow } from './endpoint-queries.ts';
import { queuePing } from './delivery-store.ts';

/**
 * `POST /v1/webhook-endpoints/{id}/test`: queues a ping (type `webhook.ping`, empty data) for this endpoint only,
 * signed and retried like any delivery (spec: 202, always). An inactive endpoint receives nothing: its ping is queued
 * and parked like its other pending deliveries, and goes out when the endpoint is activated again.
 */
export async function sendTestPing(tx: Tx, clock: Clock, organizationId: string, endpointId: string): Promise<EventEnvelope> {
  await findEndpointOrThrow(tx, organizationId, endpointId, { lock: true });
  return queuePing(tx, clock, organizationId, endpointId);
}
