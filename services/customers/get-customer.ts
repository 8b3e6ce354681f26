import type { Customer } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { CUSTOMER_COLUMNS, toCustomer, type CustomerRow } from './customer-queries.ts';

/** Another organisation's customer is indistinguishable from one that does not exist. */
export async function getCustomer(sql: Queryable, keyring: Keyring, organizationId: string, id: string): Promise<Customer> {
  if (!isUuid(id)) throw notFound('customer_not_found', 'customer');
  const [row] = await sql<CustomerRow[]>`
    SELECT ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr
    FROM customers WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (!row) throw notFound('customer_not_found', 'customer');
  return toCustomer(keyring, row);
}
