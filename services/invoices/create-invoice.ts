import type { Invoice, InvoiceCreate } from '../../contracts/invoices.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { findOrCreateCustomer } from '../customers/find-or-create-customer.ts';
import { assertCustomerExists } from '../customers/department-queries.ts';
import { getInvoiceOrThrow, writeLines } from './invoice-queries.ts';
import { recordTimeline } from './record-timeline.ts';
import { INVOICE_STATUS } from './invoice-lifecycle.ts';

/** Creates a draft invoice for a known customer or an inline one (found or created, never overwritten). */
export async function createInvoice(sql: Queryable, keyring: Keyring, organizationId: string, input: InvoiceCreate): Promise<Invoice> {
  let customerId: string;
  if (input.customer) customerId = (await findOrCreateCustomer(sql, keyring, organizationId, input.customer)).id;
  else {
    customerId = input.customerId!;
    await assertCustomerExists(sql, organizationId, customerId);
  }
  const id = uuidv7();
  await sql`
    INSERT INTO invoices ${sql({
      id,
      organization_id: organizationId,
      type: 'invoice',
      status: INVOICE_STATUS.draft,
      customer_id: customerId,
      due_date: input.dueDate ?? null,
      payment_terms_days: input.paymentTermsDays ?? null,
      net_oere: 0,
      vat_oere: 0,
      gross_oere: 0,
      customer_reference: input.customerReference ?? null,
      sender_reference: input.senderReference ?? null,
      buyer_reference: input.buyerReference ?? null,
      order_reference: input.orderReference ?? null,
      message: input.message ?? null,
      heading: input.heading ?? null,
      external_reference: input.externalReference ?? null,
      metadata: input.metadata ?? null,
    } as Record<string, unknown>)}`;
  const totals = await writeLines(sql, organizationId, id, input.lines);
  await sql`
    UPDATE invoices SET net_oere = ${totals.netOere}, vat_oere = ${totals.vatOere}, gross_oere = ${totals.grossOere}
    WHERE organization_id = ${organizationId} AND id = ${id}`;
  await recordTimeline(sql, organizationId, id, 'created');
  return getInvoiceOrThrow(sql, organizationId, id);
}
