import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { findInvoiceRow, loadLines } from './invoice-queries.ts';
import { loadBuyer, type BuyerSnapshot } from './document-parties.ts';
import { documentView } from './issue-invoice.ts';
import type { InvoiceDocumentView } from './invoice-document.ts';

/**
 * The document view of an issued invoice, rebuilt from what was frozen at issue (seller and buyer snapshots, lines),
 * plus what sending needs now: the customer's language and e-mail address.
 */
export async function loadDocumentView(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  invoiceId: string,
): Promise<{ view: InvoiceDocumentView; buyerEmail: string | null; documentSha256: Buffer; externalReference: string | null } | undefined> {
  const row = await findInvoiceRow(sql, organizationId, invoiceId, { type: 'invoice' });
  if (!row || row.status === 'draft' || row.status === 'issuing' || !row.document_sha256) return undefined;
  const [snap] = await sql<{ seller_snapshot: InvoiceDocumentView['seller']; buyer_snapshot: InvoiceDocumentView['buyer'] }[]>`
    SELECT seller_snapshot, buyer_snapshot FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  const current = await loadBuyer(sql, keyring, organizationId, row.customer_id);
  const buyer: BuyerSnapshot = { ...snap!.buyer_snapshot, language: current.language, email: current.email };
  const lines = (await loadLines(sql, [invoiceId])).get(invoiceId) ?? [];
  const view = documentView('invoice', row.number!, row.issue_date!, row.due_date, snap!.seller_snapshot, buyer, row, lines, null);
  return { view, buyerEmail: current.email, documentSha256: row.document_sha256, externalReference: row.external_reference };
}
