import type { EventEnvelope, EventListQuery } from '../../contracts/events.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { EVENT_COLUMNS, toEnvelope, type EventRow } from './event-envelope.ts';
import { sinceInstant, uuidv7Floor } from './since.ts';

/**
 * An event's id is minted (UUIDv7, app clock) after its transaction began (occurred_at, database clock), so an
 * event at or after `since` has an id at or after `since` minus any skew between the two clocks. The id bound lets
 * the (organization_id, id) index do the work; the exact test is on occurred_at.
 */
const CLOCK_SKEW_SLACK_MS = 5 * 60 * 1000;

/**
 * The pull feed (docs/api-conventions.md, "Events, webhooks and the test clock"): the event log, oldest first, in the
 * exact webhook delivery shape. Keyset on the time-ordered id, so paging never skips or repeats an event that was
 * already there.
 */
export async function listEvents(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: EventListQuery,
): Promise<{ items: EventEnvelope[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'events', filters: [q.since ?? null, q.type ?? null] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const since = q.since !== undefined ? sinceInstant(q.since) : null;
  const rows = await sql<EventRow[]>`
    SELECT ${sql(EVENT_COLUMNS)}
    FROM events
    WHERE organization_id = ${organizationId}
      ${since ? sql`AND occurred_at >= ${since} AND id >= ${uuidv7Floor(since.getTime() - CLOCK_SKEW_SLACK_MS)}` : sql``}
      ${q.type !== undefined ? sql`AND type = ${q.type}` : sql``}
      ${after ? sql`AND id > ${after}` : sql``}
    ORDER BY id
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: items.map(toEnvelope), nextCursor };
}
