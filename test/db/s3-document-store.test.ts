import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectRetentionCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { RunningCephS3 } from '../../deploy/local/ceph-s3.ts';
import { createDocumentStore } from '../../services/documents/create-document-store.ts';
import { DocumentIntegrityError, type DocumentStore } from '../../services/documents/document-store.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { createS3DocumentStore, documentObjectKey } from '../../services/documents/s3-document-store.ts';
import { sha256 } from '../../services/shared/crypto.ts';
import { startTestCephS3 } from '../helpers/ceph-s3.ts';
import { createTestOrg, testDb, type TestOrg } from '../helpers/context.ts';

/**
 * The document archive against a real S3 server with Object Lock: Ceph's radosgw on loopback, started for this file.
 * What the server refuses is asked of the server itself with the raw SDK, not of our code.
 */

const pdfBytes = (): Buffer => Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(2048)]);

const accessDenied = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  assert.equal(e.name, 'AccessDenied');
  assert.equal(e.$metadata?.httpStatusCode, 403);
  return true;
};

describe('S3 document store (radosgw with Object Lock)', () => {
  let ceph: RunningCephS3;
  let raw: S3Client;
  let store: DocumentStore;
  let org: TestOrg;
  let other: TestOrg;

  before(async function () {
    this.timeout(120_000);
    ceph = await startTestCephS3();
    raw = new S3Client({
      endpoint: ceph.endpoint,
      region: ceph.region,
      forcePathStyle: true,
      credentials: { accessKeyId: ceph.accessKeyId, secretAccessKey: ceph.secretAccessKey },
      maxAttempts: 1,
    });
    store = createS3DocumentStore({ client: raw, bucket: ceph.bucket });
    org = await createTestOrg();
    other = await createTestOrg();
  });

  after(async () => {
    raw?.destroy();
    await ceph?.stop();
  });

  const versions = async (key: string) =>
    ((await raw.send(new ListObjectVersionsCommand({ Bucket: ceph.bucket, Prefix: key }))).Versions ?? []).filter((v) => v.Key === key);

  it('stores the bytes as a locked object under organisation and SHA-256, indexes them in PostgreSQL and reads them back', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const stored = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    assert.deepEqual(stored, { sha256: sha256(bytes), size: bytes.length });

    const key = `documents/${org.organizationId}/${sha256(bytes).toString('hex')}`;
    assert.equal(documentObjectKey(org.organizationId, stored.sha256), key);
    const head = await raw.send(new HeadObjectCommand({ Bucket: ceph.bucket, Key: key }));
    assert.equal(head.ObjectLockMode, 'COMPLIANCE');
    assert.equal(head.ContentLength, bytes.length);
    assert.equal(head.ContentType, 'application/pdf');
    const year = Number(new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Copenhagen', year: 'numeric' }).format(new Date()));
    assert.equal(head.ObjectLockRetainUntilDate?.toISOString(), `${year + 6}-01-01T00:00:00.000Z`);

    const [row] = await db.sql<{ storage: string; content: Buffer | null; retain_until: string; object_version: string; size_bytes: number; content_type: string }[]>`
      SELECT storage, content, retain_until::text, object_version, size_bytes, content_type FROM documents WHERE sha256 = ${stored.sha256}`;
    assert.deepEqual(row, {
      storage: 's3',
      content: null,
      retain_until: `${year + 5}-12-31`,
      object_version: head.VersionId,
      size_bytes: bytes.length,
      content_type: 'application/pdf',
    });

    const doc = await store.get(db.sql, org.organizationId, stored.sha256);
    assert.deepEqual(doc, { bytes, contentType: 'application/pdf' });
  });

  it('the retention follows the Copenhagen date of the put: 31 December and 1 January', async () => {
    const { db } = testDb();
    const cases: [at: string, lock: string, lastDay: string][] = [
      ['2026-12-31T22:30:00Z', '2032-01-01T00:00:00.000Z', '2031-12-31'], // 23:30 on 31 December in Copenhagen
      ['2026-12-31T23:30:00Z', '2033-01-01T00:00:00.000Z', '2032-12-31'], // 00:30 on 1 January in Copenhagen
    ];
    for (const [at, lock, lastDay] of cases) {
      const dated = createS3DocumentStore({ client: raw, bucket: ceph.bucket, now: () => new Date(at) });
      const bytes = pdfBytes();
      const stored = await db.tx((tx) => dated.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
      const head = await raw.send(new HeadObjectCommand({ Bucket: ceph.bucket, Key: documentObjectKey(org.organizationId, stored.sha256) }));
      assert.equal(head.ObjectLockRetainUntilDate?.toISOString(), lock, at);
      const [row] = await db.sql<{ retain_until: string }[]>`SELECT retain_until::text FROM documents WHERE sha256 = ${stored.sha256}`;
      assert.equal(row!.retain_until, lastDay, at);
    }
  });

  it('the same bytes twice are one object and one row', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const first = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    const second = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    assert.deepEqual(second, first);
    assert.equal((await versions(documentObjectKey(org.organizationId, first.sha256))).length, 1);
    const rows = await db.sql`SELECT 1 FROM documents WHERE sha256 = ${first.sha256}`;
    assert.equal(rows.length, 1);
  });

  it('an object left by a rolled-back transaction is reused by the next put of the same bytes', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    await assert.rejects(
      db.tx(async (tx) => {
        await store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes });
        throw new Error('the issue failed after the put');
      }),
      /the issue failed after the put/,
    );
    const key = documentObjectKey(org.organizationId, sha256(bytes));
    assert.equal((await db.sql`SELECT 1 FROM documents WHERE sha256 = ${sha256(bytes)}`).length, 0);
    const [left] = await versions(key);
    assert.ok(left?.VersionId);

    await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    assert.equal((await versions(key)).length, 1);
    const [row] = await db.sql<{ object_version: string }[]>`SELECT object_version FROM documents WHERE sha256 = ${sha256(bytes)}`;
    assert.equal(row!.object_version, left.VersionId);
  });

  it('another organisation gets undefined for a hash it does not own, and cannot store the same bytes', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const stored = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    assert.equal(await store.get(db.sql, other.organizationId, stored.sha256), undefined);
    await assert.rejects(
      db.tx((tx) => store.put(tx, { organizationId: other.organizationId, contentType: 'application/pdf', bytes })),
      /already stored under another organisation or content type/,
    );
    assert.equal((await versions(documentObjectKey(other.organizationId, stored.sha256))).length, 0);
  });

  it('the server refuses deleting the locked version and shortening its lock; the document reads back intact', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const stored = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    const key = documentObjectKey(org.organizationId, stored.sha256);
    const [row] = await db.sql<{ object_version: string }[]>`SELECT object_version FROM documents WHERE sha256 = ${stored.sha256}`;
    const VersionId = row!.object_version;

    await assert.rejects(raw.send(new DeleteObjectCommand({ Bucket: ceph.bucket, Key: key, VersionId })), accessDenied);
    await assert.rejects(raw.send(new DeleteObjectCommand({ Bucket: ceph.bucket, Key: key, VersionId, BypassGovernanceRetention: true })), accessDenied);
    await assert.rejects(
      raw.send(new PutObjectRetentionCommand({ Bucket: ceph.bucket, Key: key, VersionId, Retention: { Mode: 'COMPLIANCE', RetainUntilDate: new Date(Date.now() + 86_400_000) } })),
      accessDenied,
    );
    await assert.rejects(
      raw.send(new PutObjectRetentionCommand({ Bucket: ceph.bucket, Key: key, VersionId, BypassGovernanceRetention: true, Retention: { Mode: 'GOVERNANCE', RetainUntilDate: new Date(Date.now() + 86_400_000) } })),
      accessDenied,
    );
    // A delete without a version only stacks a delete marker on top; an overwrite stacks a newer version. Neither
    // touches the locked version, and reads fetch exactly that one.
    await raw.send(new DeleteObjectCommand({ Bucket: ceph.bucket, Key: key }));
    await raw.send(new PutObjectCommand({ Bucket: ceph.bucket, Key: key, Body: Buffer.from('not the document') }));
    const locked = await raw.send(new GetObjectCommand({ Bucket: ceph.bucket, Key: key, VersionId }));
    assert.deepEqual(Buffer.from(await locked.Body!.transformToByteArray()), bytes);

    assert.deepEqual(await store.get(db.sql, org.organizationId, stored.sha256), { bytes, contentType: 'application/pdf' });
  });

  it('a put finds other bytes under its key and stores its own locked version beside them', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const key = documentObjectKey(org.organizationId, sha256(bytes));
    // Written straight into the bucket, unlocked, before the document is stored: what a put must not take for it.
    const planted = await raw.send(new PutObjectCommand({ Bucket: ceph.bucket, Key: key, Body: pdfBytes() }));
    await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    const [row] = await db.sql<{ object_version: string }[]>`SELECT object_version FROM documents WHERE sha256 = ${sha256(bytes)}`;
    assert.notEqual(row!.object_version, planted.VersionId);
    assert.equal((await versions(key)).length, 2);
    assert.deepEqual(await store.get(db.sql, org.organizationId, sha256(bytes)), { bytes, contentType: 'application/pdf' });
  });

  it('bytes that do not hash to their address raise DocumentIntegrityError and are not served', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const hash = sha256(bytes);
    const key = documentObjectKey(org.organizationId, hash);
    // A locked version under the document's key holding other bytes (what corruption or a forged upload under the
    // expected key looks like), and the index row naming it: the read must refuse it.
    const other = Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.from([bytes[bytes.length - 1]! ^ 1])]);
    const forged = await raw.send(
      new PutObjectCommand({ Bucket: ceph.bucket, Key: key, Body: other, ObjectLockMode: 'COMPLIANCE', ObjectLockRetainUntilDate: new Date(Date.now() + 86_400_000) }),
    );
    await db.sql`
      INSERT INTO documents (sha256, organization_id, content_type, size_bytes, content, storage, retain_until, object_version)
      VALUES (${hash}, ${org.organizationId}, 'application/pdf', ${bytes.length}, NULL, 's3', '2031-12-31', ${forged.VersionId!})`;
    await assert.rejects(store.get(db.sql, org.organizationId, hash), (err: unknown) => {
      assert.ok(err instanceof DocumentIntegrityError);
      assert.equal(err.expectedSha256, hash.toString('hex'));
      assert.equal(err.actualSha256, sha256(other).toString('hex'));
      return true;
    });
  });

  it('serves documents the PostgreSQL store kept before the switch; the PostgreSQL store names the archive for the others', async () => {
    const { db } = testDb();
    const before = pdfBytes();
    const kept = await db.tx((tx) => createPostgresDocumentStore().put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes: before }));
    assert.deepEqual(await store.get(db.sql, org.organizationId, kept.sha256), { bytes: before, contentType: 'application/pdf' });

    const archived = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes: pdfBytes() }));
    await assert.rejects(createPostgresDocumentStore().get(db.sql, org.organizationId, archived.sha256), /kept in the s3 archive: run with DOCUMENT_STORE=s3/);
  });

  it('DOCUMENT_STORE=s3 builds the archive store from the configuration', async () => {
    const { db } = testDb();
    // The SDK takes the credentials from its environment, as the services do.
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = ceph.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = ceph.secretAccessKey;
    try {
      const configured = createDocumentStore({ documentStore: 's3', s3Endpoint: ceph.endpoint, s3Bucket: ceph.bucket, s3Region: ceph.region });
      const bytes = pdfBytes();
      const stored = await db.tx((tx) => configured.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
      assert.equal((await versions(documentObjectKey(org.organizationId, stored.sha256))).length, 1);
      assert.deepEqual(await configured.get(db.sql, org.organizationId, stored.sha256), { bytes, contentType: 'application/pdf' });
    } finally {
      for (const [k, v] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
