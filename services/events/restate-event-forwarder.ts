import type { EventForwarder } from './event-relay.ts';
import { createEngineClient } from '../shared/engine-client.ts';
import { WORKFLOW_SERVICES } from '../../contracts/workflows.ts';

/** The Restate service that fans an event out to its endpoints' deliveries. */
export const WEBHOOK_EVENTS = WORKFLOW_SERVICES.WebhookEvents;

/**
 * Hands one committed event to the WebhookEvents service as a one-way call, with the event id as idempotency key:
 * a repeated hand-off (a relay that crashed before deleting its outbox row) is accepted once.
 */
export function createRestateEventForwarder(ingressUrl: string): EventForwarder {
  const engine = createEngineClient(ingressUrl);
  return {
    forward: ({ eventId, organizationId }) =>
      engine.send({ service: 'WebhookEvents', handler: 'route', input: { eventId, organizationId } }, { idempotencyKey: eventId }),
  };
}
