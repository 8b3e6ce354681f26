import type { DocumentStore } from '../documents/document-store.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { findInvoiceRow } from './invoice-queries.ts';
import { isIssued } from './invoice-lifecycle.ts';

/**
 * The locked PDF of an issued invoice or credit note, exactly as stored, verified against its SHA-256 on every read
 * (the store throws DocumentIntegrityError on a mismatch, which the API answers with 500 and an alert in the log).
 */
export async function getInvoiceDocument(
  sql: Queryable,
  documents: DocumentStore,
  organizationId: string,
  id: string,
  type: 'invoice' | 'creditNote',
): Promise<{ bytes: Buffer; sha256: string; number: number }> {
  // /v1/invoices/{id}/pdf serves credit notes too (one store); /v1/creditnotes/{id}/pdf only credit notes.
  const row = await findInvoiceRow(sql, organizationId, id, type === 'creditNote' ? { type } : {});
  if (!row) throw type === 'invoice' ? notFound('invoice_not_found', 'invoice') : notFound('credit_note_not_found', 'credit note');
  if (!isIssued(row.status) || !row.document_sha256) {
    throw new DomainError('invoice_not_issued', 'A draft has no PDF yet; issue the invoice first.');
  }
  const doc = await documents.get(sql, organizationId, row.document_sha256);
  if (!doc) throw new Error(`issued ${type} ${id} points to document ${row.document_sha256.toString('hex')}, which is missing`);
  return { bytes: doc.bytes, sha256: row.document_sha256.toString('hex'), number: row.number! };
}
