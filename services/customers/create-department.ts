import type { Department, DepartmentCreate } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { assertCustomerExists, DEPARTMENT_COLUMNS, toDepartment, type DepartmentRow } from './department-queries.ts';

export async function createDepartment(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  customerId: string,
  input: DepartmentCreate,
): Promise<Department> {
  await assertCustomerExists(sql, organizationId, customerId);
  const row = {
    id: uuidv7(),
    organization_id: organizationId,
    customer_id: customerId,
    name: input.name,
    contact_person: input.contactPerson ?? null,
    reference: input.reference ?? null,
    email_enc: input.email == null ? null : keyring.encrypt(input.email),
    sort_order: input.sortOrder ?? 0,
  };
  const [created] = await sql<DepartmentRow[]>`
    INSERT INTO departments ${sql(row as Record<string, unknown>)} RETURNING ${sql(DEPARTMENT_COLUMNS)}`;
  return toDepartment(keyring, created!);
}
