import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { assertCustomerExists } from './department-queries.ts';

/**
 * Idempotent: deleting a department that is already deleted succeeds again. The row is kept as a tombstone so
 * that a department that never existed can still be told apart (404 department_not_found).
 */
export async function deleteDepartment(sql: Queryable, organizationId: string, customerId: string, departmentId: string): Promise<void> {
  await assertCustomerExists(sql, organizationId, customerId);
  if (!isUuid(departmentId)) throw notFound('department_not_found', 'department');
  const [row] = await sql`
    UPDATE departments SET deleted_at = coalesce(deleted_at, now())
    WHERE organization_id = ${organizationId} AND customer_id = ${customerId} AND id = ${departmentId}
    RETURNING id`;
  if (!row) throw notFound('department_not_found', 'department');
}
