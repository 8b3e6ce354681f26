import type { ReferenceRate, ReferenceRateListQuery } from '../../contracts/reference-rates.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { referenceRateView } from './reference-rates.ts';

/** GET /v1/reference-rates: the half-years' reference rates, newest first, in cursor pages like every list. */
export async function listReferenceRates(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: ReferenceRateListQuery,
): Promise<{ items: ReferenceRate[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'reference_rates', filters: [] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor) as [string]) : null;
  const rows = await sql<{ from: string; reference_rate_bp: number }[]>`
    SELECT to_char(from_date, 'YYYY-MM-DD') AS from, reference_rate_bp FROM reference_rates
    ${after ? sql`WHERE from_date < ${after[0]}` : sql``}
    ORDER BY from_date DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.from]));
  return { items: items.map((r) => referenceRateView({ from: r.from, referenceRateBp: r.reference_rate_bp })), nextCursor };
}
