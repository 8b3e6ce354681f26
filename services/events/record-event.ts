import type { EVENT_FAMILIES } from '../../contracts/events.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';

export type EventFamily = (typeof EVENT_FAMILIES)[number];

/**
 * Appends an event to the log in the caller's transaction, so it exists exactly when the change it reports does.
 * sekvensnummer is the entity's next number (1, 2, 3…): callers hold the entity's row lock, and the unique key
 * (entity_id, sekvensnummer) refuses a duplicate should two writers ever meet. The payload carries amounts, dates,
 * ids and the caller's externalReference only: never names, e-mail addresses, phone numbers or CPR.
 */
export async function recordEvent(
  sql: Queryable,
  e: { organizationId: string; type: string; family: EventFamily; entityId: string; data: Record<string, unknown> },
): Promise<{ id: string; sekvensnummer: number }> {
  const id = uuidv7();
  const [row] = await sql<{ sekvensnummer: number }[]>`
    INSERT INTO events (id, organization_id, type, entity_family, entity_id, sekvensnummer, data)
    SELECT ${id}, ${e.organizationId}, ${e.type}, ${e.family}, ${e.entityId},
           coalesce(max(sekvensnummer), 0) + 1, ${sql.json(e.data as never)}
    FROM events WHERE entity_id = ${e.entityId}
    RETURNING sekvensnummer`;
  return { id, sekvensnummer: row!.sekvensnummer };
}
