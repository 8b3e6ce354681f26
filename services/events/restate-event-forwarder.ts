import type { EventForwarder } from './event-relay.ts';
import { sendToRestate } from '../shared/restate-ingress.ts';

/** The Restate service that fans an event out to its endpoints' deliveries. */
export const WEBHOOK_EVENTS = 'WebhookEvents';

/**
 * Hands one committed event to the WebhookEvents service as a one-way call, with the event id as idempotency key:
 * a repeated hand-off (a relay that crashed before deleting its outbox row) is accepted once.
 */
export function createRestateEventForwarder(ingressUrl: string): EventForwarder {
  return {
    forward: ({ eventId, organizationId }) =>
      sendToRestate(ingressUrl, `${WEBHOOK_EVENTS}/route`, 'event hand-off', { body: { eventId, organizationId }, idempotencyKey: eventId }),
  };
}
