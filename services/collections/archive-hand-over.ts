import type { DocumentStore } from '../documents/document-store.ts';
import type { Db } from '../shared/db.ts';

/**
 * Keeps a collection hand-over in the write-once document store before it goes to the partner (docs/operations.md,
 * "Document archive"): `content` is the document as the hand-over file holds it (pretty JSON; an HTTP partner receives
 * the same document compactly serialised), and the case names it. A hand-over sent again with other content (the claim changed between attempts) is archived too, and
 * the case then names the newer one; the earlier one stays in the store.
 */
export async function archiveHandOver(
  db: Db,
  documents: DocumentStore,
  organizationId: string,
  caseId: string,
  content: string,
): Promise<Buffer> {
  return db.tx(async (tx) => {
    const { sha256 } = await documents.put(tx, { organizationId, contentType: 'application/json', bytes: Buffer.from(content, 'utf8') });
    await tx`
      UPDATE collection_cases SET hand_over_document_sha256 = ${sha256}
      WHERE organization_id = ${organizationId} AND id = ${caseId}`;
    return sha256;
  });
}
