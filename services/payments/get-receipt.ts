import type { DocumentStore } from '../documents/document-store.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';

/** Seconds a client is told to wait before asking again for a receipt that is still being rendered. */
export const RECEIPT_RETRY_AFTER_SECONDS = 2;

/**
 * A payment's receipt PDF exactly as stored, verified against its SHA-256 (docs/api-conventions.md, "Payment links, pay
 * page and receipts": `receipt_not_ready` is a 404 with Retry-After). An unknown payment, or another organisation's, is
 * `payment_not_found`; a payment whose receipt is not rendered yet is `receipt_not_ready`.
 */
export async function getReceipt(
  sql: Queryable,
  documents: DocumentStore,
  organizationId: string,
  paymentId: string,
): Promise<{ bytes: Buffer; sha256: string; paymentId: string }> {
  if (!isUuid(paymentId)) throw notFound('payment_not_found', 'payment');
  const [row] = await sql<{ id: string; document_sha256: Buffer | null }[]>`
    SELECT p.id, r.document_sha256 FROM payments p
    LEFT JOIN payment_receipts r ON r.payment_id = p.id
    WHERE p.organization_id = ${organizationId} AND p.id = ${paymentId}`;
  if (!row) throw notFound('payment_not_found', 'payment');
  if (!row.document_sha256) {
    throw new DomainError('receipt_not_ready', 'The receipt is being prepared; retry shortly.', {
      headers: { 'Retry-After': String(RECEIPT_RETRY_AFTER_SECONDS) },
    });
  }
  const doc = await documents.get(sql, organizationId, row.document_sha256);
  if (!doc) throw new Error(`the receipt of payment ${paymentId} points to document ${row.document_sha256.toString('hex')}, which is missing`);
  return { bytes: doc.bytes, sha256: row.document_sha256.toString('hex'), paymentId: row.id };
}
