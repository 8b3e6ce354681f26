import type { EventEnvelope } from '../../contracts/events.ts';

export interface EventRow {
  id: string;
  organization_id: string;
  type: string;
  entity_family: string;
  entity_id: string;
  sekvensnummer: number;
  occurred_at: Date;
  data: Record<string, unknown>;
}

export const EVENT_COLUMNS = ['id', 'organization_id', 'type', 'entity_family', 'entity_id', 'sekvensnummer', 'occurred_at', 'data'] as const;

/**
 * The one shape of an event, for webhook bodies and the pull feed alike (docs/api-conventions.md, "Events, webhooks
 * and the test clock", Shape): id, type, timestamp, organizationId, the family block {id, sekvensnummer}, data, in
 * that key order.
 */
export function toEnvelope(row: EventRow): EventEnvelope {
  return {
    id: row.id,
    type: row.type,
    timestamp: row.occurred_at.toISOString(),
    organizationId: row.organization_id,
    [row.entity_family]: { id: row.entity_id, sekvensnummer: row.sekvensnummer },
    data: row.data,
  };
}

/** A test ping in the envelope's key order (id, type, timestamp, organizationId, data): as answered and as sent. */
export const pingEnvelope = (p: { id: string; type: string; timestamp: string; organizationId: string; data: Record<string, unknown> }): EventEnvelope =>
  ({ id: p.id, type: p.type, timestamp: p.timestamp, organizationId: p.organizationId, data: p.data });
