import { sha256 } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { assertDocumentHash, assertNewDocument, verifiedDocument, type DocumentStore } from './document-store.ts';

/**
 * The default document store: the `documents` table (migration 002). Rows are only ever inserted; the table's
 * triggers refuse UPDATE, DELETE and TRUNCATE whatever the caller does, so write-once does not depend on this code.
 */
export function createPostgresDocumentStore(): DocumentStore {
  return {
    async put(sql, doc) {
      assertNewDocument(doc);
      const hash = sha256(doc.bytes);
      const inserted = await sql`
        INSERT INTO documents (sha256, organization_id, content_type, size_bytes, content)
        VALUES (${hash}, ${doc.organizationId}, ${doc.contentType}, ${doc.bytes.length}, ${doc.bytes})
        ON CONFLICT (sha256) DO NOTHING
        RETURNING sha256`;
      if (inserted.length === 0) await assertSameDocument(sql, hash, doc.organizationId, doc.contentType);
      return { sha256: hash, size: doc.bytes.length };
    },

    async get(sql, organizationId, hash) {
      assertDocumentHash(hash);
      const rows = await sql<{ content_type: string; size_bytes: number; content: Buffer | null; storage: string }[]>`
        SELECT content_type, size_bytes, content, storage FROM documents
        WHERE organization_id = ${organizationId} AND sha256 = ${hash}`;
      const row = rows[0];
      if (!row) return undefined;
      // Archived by the S3 store (migration 031): only that store can read it; going back to this one loses nothing.
      if (row.content === null) throw new Error(`document ${hash.toString('hex')} is kept in the ${row.storage} archive: run with DOCUMENT_STORE=${row.storage}`);
      return verifiedDocument(organizationId, hash, { bytes: row.content, contentType: row.content_type, size: row.size_bytes });
    },
  };
}

/**
 * The same bytes were stored before. That is the same document only if it was stored by this organisation with
 * this content type; otherwise the put would report success for a document the caller cannot read back. The hash
 * is the table's whole key, so this one lookup is not scoped by organisation; it reveals nothing but a refusal.
 */
async function assertSameDocument(sql: Queryable, hash: Buffer, organizationId: string, contentType: string): Promise<void> {
  const [existing] = await sql<{ same_organization: boolean; content_type: string }[]>`
    SELECT organization_id = ${organizationId} AS same_organization, content_type FROM documents WHERE sha256 = ${hash}`;
  if (!existing) throw new Error(`document ${hash.toString('hex')} was neither inserted nor found`);
  if (!existing.same_organization || existing.content_type !== contentType) {
    throw new Error(`document ${hash.toString('hex')} is already stored under another organisation or content type`);
  }
}
