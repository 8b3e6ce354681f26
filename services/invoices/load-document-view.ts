import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { findInvoiceRow, loadLines, type InvoiceRow } from './invoice-queries.ts';
import { isIssued } from './invoice-lifecycle.ts';
import { loadBuyer, type BuyerSnapshot } from './document-parties.ts';
import { documentView } from './issue-invoice.ts';
import type { InvoiceDocumentView } from './invoice-document.ts';
import { fikOf } from '../payments/fik-payment-id.ts';
import { printedPaymentLink } from '../payments/payment-links.ts';

/**
 * The document view of an issued invoice, rebuilt from what was frozen at issue (seller and buyer snapshots, lines,
 * payment id), plus what sending needs now: the customer's language and e-mail address, and the payment link's URL.
 */
export async function loadDocumentView(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  invoiceId: string,
  payBaseUrl?: string,
): Promise<{ view: InvoiceDocumentView; buyerEmail: string | null; documentSha256: Buffer; externalReference: string | null } | undefined> {
  const row = await findInvoiceRow(sql, organizationId, invoiceId, { type: 'invoice' });
  if (!row || !isIssued(row.status) || !row.document_sha256) return undefined;
  const current = await loadBuyer(sql, keyring, organizationId, row.customer_id);
  const view = await frozenDocumentView(sql, organizationId, row, { language: current.language, email: current.email }, payBaseUrl);
  return { view, buyerEmail: current.email, documentSha256: row.document_sha256, externalReference: row.external_reference };
}

/**
 * An invoice's document from what its issue froze (number, dates, seller and buyer snapshots, lines, the FI-kort
 * payment id); only the buyer's language and e-mail come from the caller (now, for a mail; as reserved, for the PDF
 * of a pending issue). The payment link is the invoice's own (made at issue, finish-issue.ts), its URL on the pay
 * service at `payBaseUrl` or the verified payment domain, as GET …/payment-link answers.
 */
export async function frozenDocumentView(
  sql: Queryable,
  organizationId: string,
  row: InvoiceRow,
  buyerNow: Pick<BuyerSnapshot, 'language' | 'email'>,
  payBaseUrl?: string,
): Promise<InvoiceDocumentView> {
  const [snap] = await sql<{ seller_snapshot: InvoiceDocumentView['seller']; buyer_snapshot: InvoiceDocumentView['buyer'] }[]>`
    SELECT seller_snapshot, buyer_snapshot FROM invoices WHERE organization_id = ${organizationId} AND id = ${row.id}`;
  const buyer: BuyerSnapshot = { ...snap!.buyer_snapshot, ...buyerNow };
  const lines = (await loadLines(sql, [row.id])).get(row.id) ?? [];
  const view = documentView('invoice', row.number!, row.issue_date!, row.due_date, snap!.seller_snapshot, buyer, row, lines, null);
  return { ...view, paymentLink: await printedPaymentLink(sql, organizationId, row.id, payBaseUrl), fik: fikOf(row) };
}
