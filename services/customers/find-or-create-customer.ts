import type { CustomerCreate } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { createCustomer } from './create-customer.ts';
import { emailIndex } from './customer-queries.ts';
import { assertEInvoiceFields } from './einvoice-address.ts';

/**
 * Inline customers on invoice creation: matched on externalReference, then cvr, then e-mail
 * (exact), in that order; created when none matches. An existing customer is never overwritten by the inline data.
 * The oldest match wins when several customers share a key.
 */
export async function findOrCreateCustomer(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  input: CustomerCreate,
): Promise<{ id: string; created: boolean }> {
  // A bad e-invoice address is refused whether or not the customer exists: the request is wrong either way.
  assertEInvoiceFields(input, '/customer');
  // Two concurrent requests naming the same new customer must not both create it: inline creation is one at a time
  // per organisation (for the rest of the caller's transaction).
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`inline-customer:${organizationId}`}, 0))`;
  const probes = [
    input.externalReference ? sql`external_reference = ${input.externalReference}` : null,
    input.cvr ? sql`cvr = ${input.cvr}` : null,
    input.email ? sql`email_bidx = ${emailIndex(keyring, input.email)}` : null,
  ];
  for (const where of probes) {
    if (!where) continue;
    const [hit] = await sql<{ id: string }[]>`
      SELECT id FROM customers WHERE organization_id = ${organizationId} AND ${where} ORDER BY id LIMIT 1`;
    if (hit) return { id: hit.id, created: false };
  }
  const created = await createCustomer(sql, keyring, organizationId, input);
  return { id: created.id, created: true };
}
