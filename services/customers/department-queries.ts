import type { Department } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';

export interface DepartmentRow {
  id: string;
  customer_id: string;
  name: string;
  contact_person: string | null;
  reference: string | null;
  email_enc: Buffer | null;
  sort_order: number;
  created_at: Date;
}

export const DEPARTMENT_COLUMNS = ['id', 'customer_id', 'name', 'contact_person', 'reference', 'email_enc', 'sort_order', 'created_at'] as const;

export function toDepartment(keyring: Keyring, r: DepartmentRow): Department {
  return {
    id: r.id,
    customerId: r.customer_id,
    name: r.name,
    contactPerson: r.contact_person,
    reference: r.reference,
    email: r.email_enc ? keyring.decrypt(r.email_enc) : null,
    sortOrder: r.sort_order,
    createdAt: r.created_at.toISOString(),
  };
}

/** Departments hang off a customer; the customer must belong to the caller's organisation. */
export async function assertCustomerExists(sql: Queryable, organizationId: string, customerId: string): Promise<void> {
  if (!isUuid(customerId)) throw notFound('customer_not_found', 'customer');
  const [row] = await sql`SELECT 1 FROM customers WHERE organization_id = ${organizationId} AND id = ${customerId}`;
  if (!row) throw notFound('customer_not_found', 'customer');
}
