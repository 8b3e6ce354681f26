import type { DocumentStore } from '../documents/document-store.ts';
import type { Db, Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { findInvoiceRow, type InvoiceRow } from '../invoices/invoice-queries.ts';
import { isIssued } from '../invoices/invoice-lifecycle.ts';
import { buildEInvoice, missingForProfile, type EInvoiceSource } from './build-ubl.ts';
import { defaultProfile, loadEInvoiceSource } from './einvoice-view.ts';
import type { EInvoiceProfile } from './ubl-mappings.ts';

export const EINVOICE_CONTENT_TYPE = 'application/xml';

export interface EInvoiceDocument {
  bytes: Buffer;
  sha256: string;
  number: number;
  profile: EInvoiceProfile;
}

/**
 * The e-invoice of an issued invoice or credit note in a profile (GET …/einvoice; docs/einvoicing.md), write-once
 * like its PDF: the first request for a profile builds it from the issued snapshot and stores it in the document
 * store, and `invoice_einvoices` records which stored document it is; every later request answers those bytes, so
 * a customer changed since the issue changes nothing. Two first requests at once both build the same bytes (the
 * build is a function of the snapshot); the index keeps the first, and the second answers it.
 */
export async function getEInvoice(
  db: Db,
  documents: DocumentStore,
  organizationId: string,
  id: string,
  type: 'invoice' | 'creditNote',
  requested: EInvoiceProfile | undefined,
): Promise<EInvoiceDocument> {
  type Found = { stored: EInvoiceDocument } | { build: { row: InvoiceRow; profile: EInvoiceProfile; source: EInvoiceSource } };
  const found = await db.read(async (sql): Promise<Found> => {
    const row = await issuedRow(sql, organizationId, id, type);
    const profile = requested ?? (await defaultProfile(sql, organizationId, row.id));
    const stored = await storedEInvoice(sql, documents, organizationId, row, profile);
    // Made before: its bytes. Else what the first build needs: the issued row, its profile and its source.
    return stored ? { stored } : { build: { row, profile, source: await loadEInvoiceSource(sql, documents, organizationId, row) } };
  });
  if ('stored' in found) return found.stored;
  const { row, profile, source } = found.build;
  const missing = missingForProfile(source.view, profile);
  if (missing.length > 0) {
    throw new DomainError('einvoice_not_possible', `The issued document lacks what a ${profile} e-invoice needs: ${missing.map((m) => m.path).join(', ')}.`, {
      details: missing,
    });
  }
  const bytes = buildEInvoice(source, profile);
  return db.tx(async (tx) => {
    const doc = await documents.put(tx, { organizationId, contentType: EINVOICE_CONTENT_TYPE, bytes });
    const inserted = await tx`
      INSERT INTO invoice_einvoices (organization_id, invoice_id, profile, document_sha256)
      VALUES (${organizationId}, ${row.id}, ${profile}, ${doc.sha256})
      ON CONFLICT DO NOTHING RETURNING 1`;
    if (inserted.length > 0) return { bytes, sha256: doc.sha256.toString('hex'), number: row.number!, profile };
    return (await storedEInvoice(tx, documents, organizationId, row, profile))!;
  });
}

/** The issued invoice or credit note, or its refusal: 404 when unknown, 422 invoice_not_issued for a draft. */
export async function issuedRow(sql: Queryable, organizationId: string, id: string, type: 'invoice' | 'creditNote'): Promise<InvoiceRow> {
  // /v1/invoices/{id}/einvoice serves credit notes too, like its PDF; /v1/creditnotes/{id}/einvoice only credit notes.
  const row = await findInvoiceRow(sql, organizationId, id, type === 'creditNote' ? { type } : {});
  if (!row) throw type === 'invoice' ? notFound('invoice_not_found', 'invoice') : notFound('credit_note_not_found', 'credit note');
  if (!isIssued(row.status) || !row.document_sha256) {
    throw new DomainError('invoice_not_issued', 'A draft has no e-invoice yet; issue the invoice first.');
  }
  return row;
}

/** The e-invoice made earlier in this profile, exactly as stored; undefined when none was made yet. */
export async function storedEInvoice(
  sql: Queryable,
  documents: DocumentStore,
  organizationId: string,
  row: InvoiceRow,
  profile: EInvoiceProfile,
): Promise<EInvoiceDocument | undefined> {
  const [index] = await sql<{ document_sha256: Buffer }[]>`
    SELECT document_sha256 FROM invoice_einvoices WHERE organization_id = ${organizationId} AND invoice_id = ${row.id} AND profile = ${profile}`;
  if (!index) return undefined;
  const doc = await documents.get(sql, organizationId, index.document_sha256);
  if (!doc) throw new Error(`the ${profile} e-invoice of ${row.type} ${row.id} points to document ${index.document_sha256.toString('hex')}, which is missing`);
  return { bytes: doc.bytes, sha256: index.document_sha256.toString('hex'), number: row.number!, profile };
}
