import type { Customer, CustomerListQuery } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import type { Fragment } from 'postgres';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { CUSTOMER_COLUMNS, emailIndex, toCustomers, type CustomerRow } from './customer-queries.ts';
import { pastDueCustomerIds } from './balance-queries.ts';

/**
 * Newest first, keyset on the time-ordered id: rows inserted while a client pages are never skipped or repeated
 * (they sort before the cursor and show up on the next full read). `pastDue` filters by the balance computation of
 * GET /v1/customers/{id}/balance with the organisation's `today`, which the caller passes when the filter is given.
 */
export async function listCustomers(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: CustomerListQuery,
  today?: string,
): Promise<{ items: Customer[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const filters: unknown[] = [q.cvr ?? null, q.email ?? null, q.externalReference ?? null];
  if (q.pastDue !== undefined) filters.push(q.pastDue);
  const scope: CursorScope = { organizationId, list: 'customers', filters };
  if (q.pastDue !== undefined && today === undefined) throw new Error('listCustomers: the pastDue filter needs the organisation\'s today');
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  // Only the filters given become fragments: postgres.js builds every fragment of a statement on each call, empty ones
  // too, and the unfiltered first page (most reads) then needs none.
  const and: Fragment[] = [];
  if (q.cvr !== undefined) and.push(sql`AND cvr = ${q.cvr}`);
  if (q.email !== undefined) and.push(sql`AND email_bidx = ${emailIndex(keyring, q.email)}`);
  if (q.externalReference !== undefined) and.push(sql`AND external_reference = ${q.externalReference}`);
  if (q.pastDue === true) and.push(sql`AND id IN (${pastDueCustomerIds(sql, organizationId, today!)})`);
  if (q.pastDue === false) and.push(sql`AND id NOT IN (${pastDueCustomerIds(sql, organizationId, today!)})`);
  if (after) and.push(sql`AND id < ${after}`);
  const rows = and.length === 0
    ? await sql<CustomerRow[]>`
        SELECT ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr
        FROM customers
        WHERE organization_id = ${organizationId}
        ORDER BY id DESC
        LIMIT ${limit + 1}`
    : await sql<CustomerRow[]>`
        SELECT ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr
        FROM customers
        WHERE organization_id = ${organizationId} ${and}
        ORDER BY id DESC
        LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: toCustomers(keyring, items), nextCursor };
}
