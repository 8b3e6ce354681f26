import type { DocumentStore } from '../documents/document-store.ts';
import type { Queryable } from '../shared/db.ts';

/**
 * The stored PDF a delivery sends, rendered and stored by the dispatch's render step before it. A document missing
 * from the store is an Error naming whose document it is.
 */
export async function storedDocument(sql: Queryable, documents: DocumentStore, organizationId: string, sha256: Buffer, of: string): Promise<Buffer> {
  const doc = await documents.get(sql, organizationId, sha256);
  if (!doc) throw new Error(`the document of ${of} is missing from the document store`);
  return doc.bytes;
}
