import type { Customer, CustomerCreate } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { CUSTOMER_COLUMNS, personalColumns, toCustomer, type CustomerRow } from './customer-queries.ts';

export async function createCustomer(sql: Queryable, keyring: Keyring, organizationId: string, input: CustomerCreate): Promise<Customer> {
  const row = {
    id: uuidv7(),
    organization_id: organizationId,
    type: input.type,
    name: input.name,
    cvr: input.cvr ?? null,
    address: input.address ?? null,
    contact_person: input.contactPerson ?? null,
    language: input.language ?? null,
    external_reference: input.externalReference ?? null,
    metadata: input.metadata ?? null,
    email_enc: null as Buffer | null,
    email_bidx: null as Buffer | null,
    phone_enc: null as Buffer | null,
    ...personalColumns(keyring, { email: input.email ?? null, phone: input.phone ?? null }),
  };
  const [created] = await sql<CustomerRow[]>`
    INSERT INTO customers ${sql(row as Record<string, unknown>)}
    RETURNING ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr`;
  return toCustomer(keyring, created!);
}
