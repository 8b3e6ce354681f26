import { createHash } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { copenhagenToday } from '../shared/clock.ts';
import { sha256, safeEqual } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { assertDocumentHash, assertNewDocument, verifiedDocument, type DocumentStore } from './document-store.ts';
import { lockUntil, retainUntil } from './retention.ts';

export interface S3DocumentStoreOptions {
  client: S3Client;
  /** A bucket created with Object Lock enabled (which turns versioning on); docs/operations.md, "Document archive". */
  bucket: string;
  /** The instant of a put; its date in Europe/Copenhagen is the document's date. Tests pass fixed ones. */
  now?: () => Date;
}

/** Where a document's bytes live in the bucket: one prefix per organisation, named by the SHA-256 of the bytes. */
export const documentObjectKey = (organizationId: string, hash: Buffer): string => `documents/${organizationId}/${hash.toString('hex')}`;

/**
 * The archive store (DOCUMENT_STORE=s3): the bytes go to an S3 bucket with Object Lock, each object version locked in
 * COMPLIANCE mode until its retention ends (retention.ts), so the server itself refuses to delete it or shorten the
 * lock, whoever asks. The `documents` row stays in PostgreSQL as the index, written in the caller's transaction: it
 * names the locked object version and records content type and size.
 *
 * The object is written before the row and outside the transaction. A transaction that rolls back leaves a locked
 * object nothing points to (kept until its retention ends, harmless: it is a document nobody issued); a put that fails
 * fails the transaction, so no row ever names an object that was not stored.
 *
 * Write-once: a key that already holds an object is not written again when that object is this document, locked long
 * enough (the same bytes are the same document). Anything else under the key (bytes that do not hash to it, or no
 * lock) gets a new, locked version beside it; the row names that version, so what is read is always what was locked.
 */
export function createS3DocumentStore(opts: S3DocumentStoreOptions): DocumentStore {
  const { client, bucket } = opts;
  const now = opts.now ?? (() => new Date());

  const readVersion = async (key: string, versionId: string): Promise<Buffer> => {
    const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
    if (!res.Body) throw new Error(`object ${key} version ${versionId} came back without a body`);
    return Buffer.from(await res.Body.transformToByteArray());
  };

  /** The version of `key` that already is this document, locked until at least `until`; undefined when there is none. */
  const usableExisting = async (key: string, hash: Buffer, size: number, until: Date): Promise<string | undefined> => {
    let head;
    try {
      head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
      throw err;
    }
    if (!head.VersionId || head.ContentLength !== size) return undefined;
    if (head.ObjectLockMode !== 'COMPLIANCE' || !head.ObjectLockRetainUntilDate || head.ObjectLockRetainUntilDate < until) return undefined;
    return safeEqual(sha256(await readVersion(key, head.VersionId)), hash) ? head.VersionId : undefined;
  };

  const storeObject = async (key: string, bytes: Buffer, hash: Buffer, until: Date, contentType: string): Promise<string> => {
    const existing = await usableExisting(key, hash, bytes.length, until);
    if (existing) return existing;
    const res = await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: bytes,
        ContentType: contentType,
        ContentLength: bytes.length,
        // The server checks both before it stores anything: a body damaged on the way is refused, not archived.
        ContentMD5: createHash('md5').update(bytes).digest('base64'),
        ChecksumSHA256: hash.toString('base64'),
        ObjectLockMode: 'COMPLIANCE',
        ObjectLockRetainUntilDate: until,
      }),
    );
    if (!res.VersionId) throw new Error(`bucket ${bucket} stored ${key} without a version: it must be created with Object Lock enabled`);
    return res.VersionId;
  };

  return {
    async put(sql, doc) {
      assertNewDocument(doc);
      const hash = sha256(doc.bytes);
      // Indexed already: the same document, nothing to write (or a refusal, as with the PostgreSQL store).
      if (await assertSameDocument(sql, hash, doc.organizationId, doc.contentType)) return { sha256: hash, size: doc.bytes.length };
      const lastDay = retainUntil(copenhagenToday(now()));
      const key = documentObjectKey(doc.organizationId, hash);
      const version = await storeObject(key, doc.bytes, hash, lockUntil(lastDay), doc.contentType);
      const inserted = await sql`
        INSERT INTO documents (sha256, organization_id, content_type, size_bytes, content, storage, retain_until, object_version)
        VALUES (${hash}, ${doc.organizationId}, ${doc.contentType}, ${doc.bytes.length}, NULL, 's3', ${lastDay}, ${version})
        ON CONFLICT (sha256) DO NOTHING
        RETURNING sha256`;
      // Another transaction indexed the same bytes meanwhile: its row decides (our object is an unreferenced copy).
      if (inserted.length === 0 && !(await assertSameDocument(sql, hash, doc.organizationId, doc.contentType))) {
        throw new Error(`document ${hash.toString('hex')} was neither inserted nor found`);
      }
      return { sha256: hash, size: doc.bytes.length };
    },

    async get(sql, organizationId, hash) {
      assertDocumentHash(hash);
      const rows = await sql<{ content_type: string; size_bytes: number; content: Buffer | null; storage: string; object_version: string | null }[]>`
        SELECT content_type, size_bytes, content, storage, object_version FROM documents
        WHERE organization_id = ${organizationId} AND sha256 = ${hash}`;
      const row = rows[0];
      if (!row) return undefined;
      // Documents stored before the switch to the archive stay in PostgreSQL and are served from there.
      const bytes = row.storage === 's3' ? await readVersion(documentObjectKey(organizationId, hash), row.object_version!) : row.content!;
      return verifiedDocument(organizationId, hash, { bytes, contentType: row.content_type, size: row.size_bytes });
    },
  };
}

/**
 * True when the bytes are indexed already by this organisation with this content type; false when they are not
 * indexed. The same bytes under another organisation or content type are refused: the put would otherwise report a
 * document the caller cannot read back (the hash is the table's whole key, so this lookup is not scoped).
 */
async function assertSameDocument(sql: Queryable, hash: Buffer, organizationId: string, contentType: string): Promise<boolean> {
  const [existing] = await sql<{ same_organization: boolean; content_type: string }[]>`
    SELECT organization_id = ${organizationId} AS same_organization, content_type FROM documents WHERE sha256 = ${hash}`;
  if (!existing) return false;
  if (!existing.same_organization || existing.content_type !== contentType) {
    throw new Error(`document ${hash.toString('hex')} is already stored under another organisation or content type`);
  }
  return true;
}
