import type { Customer, CustomerCreate } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { assertEInvoiceFields } from './einvoice-address.ts';
import { CUSTOMER_COLUMNS, customerOf, personalColumns, toCustomer, type CustomerRow } from './customer-queries.ts';

function customerRow(keyring: Keyring, organizationId: string, input: CustomerCreate) {
  assertEInvoiceFields(input);
  return {
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
    ean: input.ean ?? null,
    peppol_id: input.peppolId ?? null,
    vat_number: input.vatNumber ?? null,
    email_enc: null as Buffer | null,
    email_bidx: null as Buffer | null,
    phone_enc: null as Buffer | null,
    ...personalColumns(keyring, { email: input.email ?? null, phone: input.phone ?? null }),
  };
}

export async function createCustomer(sql: Queryable, keyring: Keyring, organizationId: string, input: CustomerCreate): Promise<Customer> {
  const [created] = await sql<CustomerRow[]>`
    INSERT INTO customers ${sql(customerRow(keyring, organizationId, input) as Record<string, unknown>)}
    RETURNING ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr`;
  return toCustomer(keyring, created!);
}

/**
 * The same insert for a caller that need not wait for it (POST /v1/customers, add-customer.ts): the customer is
 * known before the row is written, so the INSERT is started and returned as `written`, to travel with the stored
 * response and the COMMIT. `now` is the transaction's timestamp; it is written explicitly, at the precision the API
 * shows, so the answer and every later read agree to the millisecond.
 */
export function startCreateCustomer(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  input: CustomerCreate,
  now: Date,
): { customer: Customer; written: Promise<unknown> } {
  const row = { ...customerRow(keyring, organizationId, input), created_at: now, updated_at: now };
  const written = sql`INSERT INTO customers ${sql(row as Record<string, unknown>)}`.execute();
  return { customer: customerOf({ ...row, has_cpr: false }, input.email ?? null, input.phone ?? null), written };
}
