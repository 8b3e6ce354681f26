import type { Queryable } from '../shared/db.ts';
import { isUuid } from '../shared/ids.ts';

/**
 * One customer's reminder steps are taken one at a time, automatic and manual alike: their fees count together in
 * the customer's continuous arrears. Taken before the invoice's row lock, in this order everywhere (no deadlock).
 */
export async function lockCustomerDunning(sql: Queryable, organizationId: string, invoiceId: string): Promise<void> {
  if (!isUuid(invoiceId)) return;
  const [owner] = await sql<{ customer_id: string }[]>`SELECT customer_id FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  if (owner) await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`dunning:${owner.customer_id}`}, 0))`;
}
