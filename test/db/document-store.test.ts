import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DocumentIntegrityError } from '../../services/documents/document-store.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { sha256 } from '../../services/shared/crypto.ts';
import { createTestOrg, testDb, type TestOrg } from '../helpers/context.ts';

/** The write-once document store on PostgreSQL: content addressing, tenant scoping, the triggers, hash checks. */

const store = createPostgresDocumentStore();
const pdfBytes = (): Buffer => Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(2048)]);

async function rowsWithHash(hash: Buffer): Promise<{ organization_id: string; size_bytes: number }[]> {
  const { db } = testDb();
  const rows = await db.sql<{ organization_id: string; size_bytes: number }[]>`
    SELECT organization_id, size_bytes FROM documents WHERE sha256 = ${hash}`;
  return [...rows];
}

/** A write the triggers must refuse, with their error, leaving the row as it was. */
async function assertRefused(statement: Promise<unknown>, operation: string): Promise<void> {
  await assert.rejects(statement, (err: unknown) => {
    const e = err as { code?: string; message?: string };
    assert.equal(e.code, '42501');
    assert.equal(e.message, `documents are write-once: ${operation} is not allowed`);
    return true;
  });
}

describe('PostgreSQL document store', () => {
  let org: TestOrg;
  let other: TestOrg;

  before(async () => {
    org = await createTestOrg();
    other = await createTestOrg();
  });

  it('stores bytes under their SHA-256 and reads them back for the same organisation', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const put = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    assert.deepEqual(put, { sha256: sha256(bytes), size: bytes.length });
    const got = await db.read((sql) => store.get(sql, org.organizationId, put.sha256));
    assert.deepEqual(got, { bytes, contentType: 'application/pdf' });
    assert.deepEqual(await rowsWithHash(put.sha256), [{ organization_id: org.organizationId, size_bytes: bytes.length }]);
  });

  it('keeps one document for the same bytes stored twice', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const doc = { organizationId: org.organizationId, contentType: 'application/pdf', bytes };
    const first = await db.tx((tx) => store.put(tx, doc));
    const second = await db.tx((tx) => store.put(tx, { ...doc, bytes: Buffer.from(bytes) }));
    assert.deepEqual(second, first);
    assert.equal((await rowsWithHash(first.sha256)).length, 1);
  });

  it('lets two transactions put the same bytes at once: the second waits for the first and finds its document', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const doc = { organizationId: org.organizationId, contentType: 'application/pdf', bytes };
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstPut!: () => void;
    const firstStored = new Promise<void>((resolve) => (firstPut = resolve));
    const first = db.tx(async (tx) => {
      const r = await store.put(tx, doc);
      firstPut();
      await held;
      return r;
    });
    await firstStored;
    let secondDone = false;
    const second = db.tx((tx) => store.put(tx, doc)).finally(() => (secondDone = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(secondDone, false, 'the second put must wait for the first transaction');
    release();
    assert.deepEqual(await second, await first);
    assert.equal((await rowsWithHash(sha256(bytes))).length, 1);
  });

  it('stores nothing when the transaction it was put in rolls back', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    await assert.rejects(
      db.tx(async (tx) => {
        await store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes });
        throw new Error('issue failed after the PDF was stored');
      }),
      /issue failed/,
    );
    assert.deepEqual(await rowsWithHash(sha256(bytes)), []);
    assert.equal(await db.read((sql) => store.get(sql, org.organizationId, sha256(bytes))), undefined);
  });

  it('never shows one organisation’s document to another, and refuses to file the same bytes under a second organisation', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const { sha256: hash } = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    assert.equal(await db.read((sql) => store.get(sql, other.organizationId, hash)), undefined);
    await assert.rejects(
      db.tx((tx) => store.put(tx, { organizationId: other.organizationId, contentType: 'application/pdf', bytes })),
      /already stored under another organisation or content type/,
    );
    await assert.rejects(
      db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'text/html', bytes })),
      /already stored under another organisation or content type/,
    );
    assert.deepEqual(await rowsWithHash(hash), [{ organization_id: org.organizationId, size_bytes: bytes.length }]);
  });

  it('answers undefined for a hash nobody stored', async () => {
    const { db } = testDb();
    assert.equal(await db.read((sql) => store.get(sql, org.organizationId, sha256(randomBytes(16)))), undefined);
  });

  it('refuses UPDATE, DELETE and TRUNCATE on documents with the trigger’s error', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const { sha256: hash } = await db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes }));
    await assertRefused(db.sql`UPDATE documents SET content = ${Buffer.from('forged')} WHERE sha256 = ${hash}`, 'UPDATE');
    await assertRefused(db.sql`UPDATE documents SET content_type = 'text/plain' WHERE sha256 = ${hash}`, 'UPDATE');
    await assertRefused(db.sql`DELETE FROM documents WHERE sha256 = ${hash}`, 'DELETE');
    await assertRefused(db.sql`TRUNCATE documents`, 'TRUNCATE');
    const got = await db.read((sql) => store.get(sql, org.organizationId, hash));
    assert.deepEqual(got, { bytes, contentType: 'application/pdf' });
  });

  it('raises DocumentIntegrityError instead of serving bytes that do not match their hash', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    // The store never writes such a row; it stands for storage corruption or a write that bypassed the store.
    const filedUnder = sha256(pdfBytes());
    await db.sql`
      INSERT INTO documents (sha256, organization_id, content_type, size_bytes, content)
      VALUES (${filedUnder}, ${org.organizationId}, 'application/pdf', ${bytes.length}, ${bytes})`;
    await assert.rejects(db.read((sql) => store.get(sql, org.organizationId, filedUnder)), (err: unknown) => {
      assert.ok(err instanceof DocumentIntegrityError);
      assert.ok(err instanceof Error);
      assert.equal(err.name, 'DocumentIntegrityError');
      assert.equal(err.organizationId, org.organizationId);
      assert.equal(err.expectedSha256, filedUnder.toString('hex'));
      assert.equal(err.actualSha256, sha256(bytes).toString('hex'));
      assert.match(err.message, new RegExp(`^document ${filedUnder.toString('hex')} of organisation ${org.organizationId} failed its integrity check`));
      return true;
    });
  });

  it('raises DocumentIntegrityError when the stored size disagrees with the bytes', async () => {
    const { db } = testDb();
    const bytes = pdfBytes();
    const hash = sha256(bytes);
    await db.sql`
      INSERT INTO documents (sha256, organization_id, content_type, size_bytes, content)
      VALUES (${hash}, ${org.organizationId}, 'application/pdf', ${bytes.length + 1}, ${bytes})`;
    await assert.rejects(
      db.read((sql) => store.get(sql, org.organizationId, hash)),
      (err: unknown) => err instanceof DocumentIntegrityError && err.expectedSize === bytes.length + 1 && err.actualSize === bytes.length,
    );
  });

  it('refuses empty documents, malformed content types and hashes that are not 32 bytes', async () => {
    const { db } = testDb();
    await assert.rejects(
      db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes: Buffer.alloc(0) })),
      /at least one byte/,
    );
    await assert.rejects(
      db.tx((tx) => store.put(tx, { organizationId: org.organizationId, contentType: 'pdf', bytes: pdfBytes() })),
      /invalid content type/,
    );
    await assert.rejects(db.read((sql) => store.get(sql, org.organizationId, Buffer.alloc(31))), /32-byte SHA-256/);
  });
});
