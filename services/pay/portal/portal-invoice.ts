import type { Invoice } from '../../../contracts/invoices.ts';
import type { DocumentStore } from '../../documents/document-store.ts';
import type { Queryable } from '../../shared/db.ts';
import { findInvoiceRow, type InvoiceRow } from '../../invoices/invoice-queries.ts';
import { INVOICE_STATUS, isIssued } from '../../invoices/invoice-lifecycle.ts';
import { getOrCreatePaymentLink } from '../../payments/payment-links.ts';
import type { PortalSession } from './portal-session.ts';

/**
 * An issued invoice of one of the session's customers; undefined for anything else (another customer's invoice,
 * another organisation's, a draft, a credit note), which the pages answer with the same 404.
 */
async function sessionInvoice(sql: Queryable, organizationId: string, session: PortalSession, invoiceId: string): Promise<InvoiceRow | undefined> {
  const row = await findInvoiceRow(sql, organizationId, invoiceId, { type: 'invoice' });
  if (!row || !isIssued(row.status) || !session.customers.some((c) => c.id === row.customer_id)) return undefined;
  return row;
}

/** The invoice's stored PDF, exactly as issued (verified against its hash by the store). */
export async function portalInvoicePdf(
  sql: Queryable,
  documents: DocumentStore,
  organizationId: string,
  session: PortalSession,
  invoiceId: string,
): Promise<{ bytes: Buffer; number: number } | undefined> {
  const row = await sessionInvoice(sql, organizationId, session, invoiceId);
  if (!row?.document_sha256) return undefined;
  const doc = await documents.get(sql, organizationId, row.document_sha256);
  if (!doc) throw new Error(`issued invoice ${row.id} points to a document that is missing`);
  return { bytes: doc.bytes, number: row.number! };
}

/**
 * Where the debtor pays an open invoice: its payment link (docs/api-conventions.md, "Payment links, pay page and
 * receipts"), created now if the invoice has none, through the same use case as POST /v1/invoices/{id}/payment-link.
 * Undefined when the invoice is not theirs or not open.
 */
export async function portalPaymentUrl(
  sql: Queryable,
  organizationId: string,
  session: PortalSession,
  invoiceId: string,
  payBaseUrl: string,
): Promise<string | undefined> {
  const row = await sessionInvoice(sql, organizationId, session, invoiceId);
  if (!row || row.status === INVOICE_STATUS.paid) return undefined;
  return (await getOrCreatePaymentLink(sql, organizationId, row.id, payBaseUrl)).url;
}

/**
 * The status an invoice is labelled with on the debtor's page: the API's status (`issued`, `overdue`, `collections`,
 * `paid`), except that an `issued` invoice the balance above it counts as overdue (a positive balance, due before
 * the balance's today: docs/api-conventions.md, Customer balance) is labelled overdue too. The API's `overdue` is
 * written only with the first reminder, days later; until then "Åben" under a header that counts the invoice as
 * overdue told the debtor two things at once.
 */
export function portalInvoiceStatus(invoice: Pick<Invoice, 'status' | 'balanceOere' | 'dueDate'>, today: string): Invoice['status'] {
  const pastDue = invoice.balanceOere > 0 && invoice.dueDate !== null && invoice.dueDate < today;
  return invoice.status === INVOICE_STATUS.issued && pastDue ? INVOICE_STATUS.overdue : invoice.status;
}
