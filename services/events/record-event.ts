import { EVENT_FAMILY_BLOCK, EVENT_TYPE_FAMILY, type EventData } from '../../contracts/event-catalogue.ts';
import type { EventType } from '../../contracts/events.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';

/** An event to record: its type decides the shape of `data` and the family block it is delivered with. */
export type EventRecord<T extends EventType = EventType> = {
  [K in T]: { organizationId: string; type: K; entityId: string; data: EventData<K> };
}[T];

/**
 * Appends an event to the log in the caller's transaction, so it exists exactly when the change it reports does.
 * sekvensnummer is the entity's next number (1, 2, 3…): callers hold the entity's row lock, and the unique key
 * (entity_id, sekvensnummer) refuses a duplicate should two writers ever meet. The payload carries amounts, dates,
 * ids and the caller's externalReference only: never names, e-mail addresses, phone numbers or CPR (the payload
 * types in contracts/event-catalogue.ts). The envelope's block comes from the type's family (a reminder's is its
 * invoice's: `entityId` is then the invoice's id, and the event counts in the invoice's sekvensnummer).
 */
export async function recordEvent<T extends EventType>(sql: Queryable, e: EventRecord<T>): Promise<{ id: string; sekvensnummer: number }> {
  const id = uuidv7();
  const family = EVENT_FAMILY_BLOCK[EVENT_TYPE_FAMILY[e.type]];
  const [row] = await sql<{ sekvensnummer: number }[]>`
    INSERT INTO events (id, organization_id, type, entity_family, entity_id, sekvensnummer, data)
    SELECT ${id}, ${e.organizationId}, ${e.type}, ${family}, ${e.entityId},
           coalesce(max(sekvensnummer), 0) + 1, ${sql.json(e.data as never)}
    FROM events WHERE entity_id = ${e.entityId}
    RETURNING sekvensnummer`;
  return { id, sekvensnummer: row!.sekvensnummer };
}
