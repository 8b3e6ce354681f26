import type { Customer, CustomerPatch } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { assertEInvoiceFields } from './einvoice-address.ts';
import { CUSTOMER_COLUMNS, personalColumns, toCustomer, type CustomerRow } from './customer-queries.ts';

const PLAIN_FIELDS = {
  type: 'type',
  name: 'name',
  cvr: 'cvr',
  address: 'address',
  contactPerson: 'contact_person',
  language: 'language',
  externalReference: 'external_reference',
  metadata: 'metadata',
  ean: 'ean',
  peppolId: 'peppol_id',
  vatNumber: 'vat_number',
} as const satisfies Partial<Record<keyof CustomerPatch, string>>;

/** PATCH semantics: an omitted field is kept, `null` clears it, a value replaces it (objects as a whole). */
export async function updateCustomer(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  id: string,
  patch: CustomerPatch,
): Promise<Customer> {
  if (!isUuid(id)) throw notFound('customer_not_found', 'customer');
  assertEInvoiceFields(patch);
  const set: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(PLAIN_FIELDS)) {
    const value = patch[field as keyof typeof PLAIN_FIELDS];
    if (value !== undefined) set[column] = value;
  }
  Object.assign(set, personalColumns(keyring, patch));
  // updated_at comes from the database clock, like created_at, so the two can never disagree.
  const [row] = Object.keys(set).length === 0
    ? await sql<CustomerRow[]>`
        UPDATE customers SET updated_at = now()
        WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr`
    : await sql<CustomerRow[]>`
        UPDATE customers SET ${sql(set)}, updated_at = now()
        WHERE organization_id = ${organizationId} AND id = ${id}
        RETURNING ${sql(CUSTOMER_COLUMNS)}, cpr_enc IS NOT NULL AS has_cpr`;
  if (!row) throw notFound('customer_not_found', 'customer');
  return toCustomer(keyring, row);
}
