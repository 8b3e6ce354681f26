import type { Queryable } from '../shared/db.ts';
import type { InvoiceDocumentView } from '../invoices/invoice-document.ts';
import { loadLines, type InvoiceRow } from '../invoices/invoice-queries.ts';
import { documentView } from '../invoices/issue-invoice.ts';
import type { BuyerSnapshot } from '../invoices/document-parties.ts';
import type { EInvoiceSource } from './build-ubl.ts';
import { storedDocument } from '../dispatch/stored-document.ts';
import type { DocumentStore } from '../documents/document-store.ts';
import type { EInvoiceProfile } from './ubl-mappings.ts';
import { fikOf } from '../payments/fik-payment-id.ts';

/**
 * What an e-invoice is built from: the issued document exactly as its issue froze it (number, dates, the seller's
 * and buyer's snapshots with the buyer's e-invoice address and VAT number, the lines, the FI-kort payment id, and for
 * a credit note the invoice it credits), and its stored PDF. Nothing is read from the customer as it is now.
 */
export async function loadEInvoiceSource(sql: Queryable, documents: DocumentStore, organizationId: string, row: InvoiceRow): Promise<EInvoiceSource> {
  const [snap] = await sql<{
    seller_snapshot: InvoiceDocumentView['seller'];
    buyer_snapshot: InvoiceDocumentView['buyer'];
    credit_reason: string | null;
    credited_number: number | null;
    credited_issue_date: string | null;
  }[]>`
    SELECT i.seller_snapshot, i.buyer_snapshot, i.credit_reason, o.number AS credited_number, o.issue_date::text AS credited_issue_date
    FROM invoices i LEFT JOIN invoices o ON o.organization_id = i.organization_id AND o.id = i.credits_invoice_id
    WHERE i.organization_id = ${organizationId} AND i.id = ${row.id}`;
  // The language and e-mail only matter to the PDF and the mail; the e-invoice has its own (Danish) wording.
  const buyer: BuyerSnapshot = { ...snap!.buyer_snapshot, language: 'da', email: null };
  const lines = (await loadLines(sql, [row.id])).get(row.id) ?? [];
  const credits =
    row.type === 'creditNote' && snap!.credited_number !== null
      ? { number: snap!.credited_number, issueDate: snap!.credited_issue_date!, reason: snap!.credit_reason ?? '' }
      : null;
  const view = documentView(row.type, row.number!, row.issue_date!, row.type === 'creditNote' ? null : row.due_date, snap!.seller_snapshot, buyer, row, lines, credits);
  const pdf = await storedDocument(sql, documents, organizationId, row.document_sha256!, `${row.type} ${row.id}`);
  // The FI-kort payment id the invoice was issued with is its payment means (docs/einvoicing.md); a credit note
  // has nothing to pay and carries none.
  return { id: row.id, view, pdf, fik: row.type === 'creditNote' ? null : fikOf(row) };
}

/** The profile when a request names none: OIOUBL when the issued buyer has a GLN (NemHandel), else Peppol BIS 3. */
export async function defaultProfile(sql: Queryable, organizationId: string, invoiceId: string): Promise<EInvoiceProfile> {
  const [row] = await sql<{ ean: string | null }[]>`
    SELECT buyer_snapshot->>'ean' AS ean FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  return row?.ean ? 'oioubl' : 'peppol-bis-3';
}
