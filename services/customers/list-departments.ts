import type { Department } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { assertCustomerExists, DEPARTMENT_COLUMNS, toDepartment, type DepartmentRow } from './department-queries.ts';

/** Ordered by sortOrder, then name, then id (the tie-breaker that makes the keyset total). */
export async function listDepartments(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  customerId: string,
  q: { limit?: number; cursor?: string },
): Promise<{ items: Department[]; nextCursor: string | null }> {
  await assertCustomerExists(sql, organizationId, customerId);
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'departments', filters: [customerId] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor) as [number, string, string]) : null;
  const rows = await sql<DepartmentRow[]>`
    SELECT ${sql(DEPARTMENT_COLUMNS)} FROM departments
    WHERE organization_id = ${organizationId} AND customer_id = ${customerId} AND deleted_at IS NULL
      ${after ? sql`AND (sort_order, name, id) > (${after[0]}, ${after[1]}, ${after[2]})` : sql``}
    ORDER BY sort_order, name, id
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.sort_order, last.name, last.id]));
  return { items: items.map((r) => toDepartment(keyring, r)), nextCursor };
}
