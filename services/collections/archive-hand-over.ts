import type { DocumentStore } from '../documents/document-store.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Db } from '../shared/db.ts';

/** The stored form of a hand-over: the document sealed with the personal-data key (AES-256-GCM), never the clear text. */
export const SEALED_HAND_OVER = 'application/vnd.faktura.sealed-hand-over';

/**
 * Keeps a collection hand-over in the write-once document store before it goes to the partner (docs/operations.md,
 * "Document archive"): `content` is the document as the hand-over file holds it (pretty JSON; an HTTP partner receives
 * the same document compactly serialised), and the case names it. A hand-over sent again with other content (the claim changed between attempts) is archived too, and
 * the case then names the newer one; the earlier one stays in the store.
 *
 * A hand-over carries the debtors' CPR numbers, e-mail addresses and phone numbers, which the service otherwise keeps
 * only encrypted: the archived copy is sealed with the same key (`keyring.encrypt`), so neither the `documents` table
 * nor an S3 bucket holds them in the clear. Reading it back is `keyring.decrypt` of the stored bytes.
 */
export async function archiveHandOver(
  db: Db,
  documents: DocumentStore,
  keyring: Keyring,
  organizationId: string,
  caseId: string,
  content: string,
): Promise<Buffer> {
  return db.tx(async (tx) => {
    const { sha256 } = await documents.put(tx, { organizationId, contentType: SEALED_HAND_OVER, bytes: keyring.encrypt(content) });
    await tx`
      UPDATE collection_cases SET hand_over_document_sha256 = ${sha256}
      WHERE organization_id = ${organizationId} AND id = ${caseId}`;
    return sha256;
  });
}
