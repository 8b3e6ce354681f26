import { sha256, safeEqual } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';

/**
 * The write-once document store (issued PDFs and collection hand-overs): the port the use cases see. Adapters:
 * postgres-document-store.ts (the default) and s3-document-store.ts (an S3 bucket with Object Lock).
 *
 * Documents are addressed by the SHA-256 of their bytes, so the hash an issued invoice row holds names exactly one
 * document, and storing the same bytes twice stores one document. A stored document is never changed or removed
 * (Bogføringsloven: records kept unaltered, 5 years at least): the adapter, not the caller, guarantees that.
 *
 * Both operations take the caller's queryable: with PostgreSQL the put is part of the issuing transaction, so the
 * document exists exactly when the number that points to it does. An object-store adapter writes the bytes outside
 * the transaction and keeps only its index row in it; an object written by a transaction that then rolls back is
 * unreferenced, not wrong.
 */
export interface DocumentStore {
  put(sql: Queryable, doc: NewDocument): Promise<{ sha256: Buffer; size: number }>;
  /** The document, verified against its hash; undefined when this organisation has no document with that hash. */
  get(sql: Queryable, organizationId: string, sha256: Buffer): Promise<StoredDocument | undefined>;
}

export interface NewDocument {
  organizationId: string;
  contentType: string;
  bytes: Buffer;
}

export interface StoredDocument {
  bytes: Buffer;
  contentType: string;
}

/**
 * A stored document whose bytes no longer match the hash it is filed under. Never served: the API answers 500
 * internal_error and logs the error, which carries what an operator needs to find the document (no content).
 */
export class DocumentIntegrityError extends Error {
  readonly organizationId: string;
  readonly expectedSha256: string;
  readonly actualSha256: string;
  readonly expectedSize: number;
  readonly actualSize: number;

  constructor(organizationId: string, expected: Buffer, actual: Buffer, expectedSize: number, actualSize: number) {
    super(
      `document ${expected.toString('hex')} of organisation ${organizationId} failed its integrity check ` +
        `(stored bytes hash to ${actual.toString('hex')}, ${actualSize} bytes where ${expectedSize} were stored)`,
    );
    this.name = 'DocumentIntegrityError';
    this.organizationId = organizationId;
    this.expectedSha256 = expected.toString('hex');
    this.actualSha256 = actual.toString('hex');
    this.expectedSize = expectedSize;
    this.actualSize = actualSize;
  }
}

export function assertDocumentHash(hash: Buffer): void {
  if (!Buffer.isBuffer(hash) || hash.length !== 32) throw new TypeError('a document is addressed by a 32-byte SHA-256');
}

export function assertNewDocument(doc: NewDocument): void {
  if (!Buffer.isBuffer(doc.bytes) || doc.bytes.length === 0) throw new TypeError('a document needs at least one byte');
  if (!/^[a-z]+\/[a-z0-9.+-]+$/i.test(doc.contentType)) throw new TypeError(`invalid content type ${JSON.stringify(doc.contentType)}`);
}

/**
 * Every adapter's reads end here: the bytes are served only if they hash to the address they were read from and
 * have the size recorded when they were stored.
 */
export function verifiedDocument(
  organizationId: string,
  expected: Buffer,
  stored: { bytes: Buffer; contentType: string; size: number },
): StoredDocument {
  const actual = sha256(stored.bytes);
  if (!safeEqual(actual, expected) || stored.bytes.length !== stored.size) {
    throw new DocumentIntegrityError(organizationId, expected, actual, stored.size, stored.bytes.length);
  }
  return { bytes: stored.bytes, contentType: stored.contentType };
}
