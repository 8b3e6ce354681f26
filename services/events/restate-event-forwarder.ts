import type { EventForwarder } from './event-relay.ts';

/** The Restate service that fans an event out to its endpoints' deliveries. */
export const WEBHOOK_EVENTS = 'WebhookEvents';

/**
 * Hands one committed event to the WebhookEvents service as a one-way call, with the event id as idempotency key:
 * a repeated hand-off (a relay that crashed before deleting its outbox row) is accepted once.
 */
export function createRestateEventForwarder(ingressUrl: string): EventForwarder {
  const base = ingressUrl.replace(/\/+$/, '');
  return {
    async forward({ eventId, organizationId }) {
      const res = await fetch(`${base}/${WEBHOOK_EVENTS}/route/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': eventId },
        body: JSON.stringify({ eventId, organizationId }),
        signal: AbortSignal.timeout(5000),
      });
      if (res.status !== 202 && res.status !== 200) throw new Error(`Restate refused the event hand-off: ${res.status} ${await res.text()}`);
    },
  };
}
