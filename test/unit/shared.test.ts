import assert from 'node:assert/strict';
import { createKeyring, parseMasterKey, randomBytesPooled, randomToken, sha256 } from '../../services/shared/crypto.ts';
import { createBatchDecrypt } from '../../services/shared/batch-decrypt.ts';
import { decodeCursor, encodeCursor, page } from '../../services/shared/cursor.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { isUuid, uuidv7 } from '../../services/shared/ids.ts';
import { Semaphore } from '../../services/shared/semaphore.ts';
import { canonicalJson } from '../../services/idempotency/request-fingerprint.ts';
import { redactUrl } from '../../services/api/app.ts';
import { parseSafeBigint } from '../../services/shared/db.ts';

const keyring = createKeyring(Buffer.alloc(32, 1));

describe('crypto', () => {
  it('round-trips text through AES-256-GCM with a fresh nonce each time', () => {
    const a = keyring.encrypt('ida@example.dk');
    const b = keyring.encrypt('ida@example.dk');
    assert.notDeepEqual(a, b);
    assert.equal(keyring.decrypt(a), 'ida@example.dk');
    assert.equal(a[0], 1);
    assert.equal(a.length, 1 + 12 + Buffer.byteLength('ida@example.dk') + 16);
  });

  it('refuses a tampered ciphertext and one from another key', () => {
    const blob = keyring.encrypt('secret');
    blob[14] = blob[14]! ^ 1;
    assert.throws(() => keyring.decrypt(blob));
    assert.throws(() => createKeyring(Buffer.alloc(32, 2)).decrypt(keyring.encrypt('secret')));
  });

  it('decrypts a batch exactly as one value at a time: GCM test vectors, every length around the block size, nulls kept in place', () => {
    // AES-256-GCM test cases 13, 14 and 15 of the GCM specification (96-bit IV, no additional data), in the stored layout.
    const stored = (iv: string, ct: string, tag: string) => Buffer.concat([Buffer.of(1), Buffer.from(iv + ct + tag, 'hex')]);
    const zeroKey = createBatchDecrypt(Buffer.alloc(32));
    assert.deepEqual(
      zeroKey([
        stored('0'.repeat(24), '', '530f8afbc74536b9a963b4f1c4cb738b'),
        null,
        stored('0'.repeat(24), 'cea7403d4d606b6e074ec5d3baf39d18', 'd0d1c8a799996bf0265b98b5d48ab919'),
      ]),
      ['', null, '\u0000'.repeat(16)],
    );
    const k15 = 'feffe9928665731c6d6a8f9467308308'.repeat(2);
    const p15 = 'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255';
    const c15 = '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad';
    assert.deepEqual(
      createBatchDecrypt(Buffer.from(k15, 'hex'))([stored('cafebabefacedbaddecaf888', c15, 'b094dac5d93471bdec1a502270e3cc6c')]),
      [Buffer.from(p15, 'hex').toString('utf8')],
    );

    // Lengths 0..70 bytes (none, part of, exactly and more than one to four blocks), multi-byte text among them.
    const texts: (string | null)[] = [];
    for (let n = 0; n <= 70; n++) texts.push(n % 9 === 4 ? null : 'x'.repeat(n), n % 5 === 0 ? `æøå ${'€'.repeat(n % 7)} 😀 ${n}` : `+45 ${n}`);
    const blobs = texts.map((t) => (t === null ? null : keyring.encrypt(t)));
    assert.deepEqual(keyring.decryptMany(blobs), texts);
    assert.deepEqual(keyring.decryptMany(blobs), blobs.map((b) => (b === null ? null : keyring.decrypt(b))));
    assert.deepEqual(keyring.decryptMany([]), []);
    assert.deepEqual(keyring.decryptMany([null, null]), [null, null]);
  });

  it('refuses the whole batch when any value is tampered with anywhere, from another key, truncated or of an unknown version', () => {
    const good = ['ida@example.dk', '+45 12 34 56 78'].map((t) => keyring.encrypt(t));
    const blob = keyring.encrypt('bogholderi@kunde.example.dk');
    // Every bit of the nonce, the ciphertext and the tag.
    for (let i = 1; i < blob.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const bad = Buffer.from(blob);
        bad[i] = bad[i]! ^ (1 << bit);
        assert.throws(() => keyring.decryptMany([good[0]!, null, bad, good[1]!]), /unable to authenticate/, `byte ${i} bit ${bit}`);
      }
    }
    assert.throws(() => keyring.decryptMany([good[0]!, createKeyring(Buffer.alloc(32, 2)).encrypt('secret')]), /unable to authenticate/);
    assert.throws(() => keyring.decryptMany([blob.subarray(0, 28)]), /unable to authenticate/);
    assert.throws(() => keyring.decryptMany([Buffer.concat([Buffer.of(2), blob.subarray(1)])]), /unknown ciphertext version 2/);
  });

  it('derives a deterministic blind index that depends on kind, value and key', () => {
    assert.deepEqual(keyring.blindIndex('e', 'a@b.dk'), keyring.blindIndex('e', 'a@b.dk'));
    assert.notDeepEqual(keyring.blindIndex('e', 'a@b.dk'), keyring.blindIndex('e', 'A@b.dk'));
    assert.notDeepEqual(keyring.blindIndex('e', 'a@b.dk'), keyring.blindIndex('f', 'a@b.dk'));
    assert.notDeepEqual(keyring.blindIndex('e', 'a@b.dk'), createKeyring(Buffer.alloc(32, 2)).blindIndex('e', 'a@b.dk'));
  });

  it('hashes text and bytes with SHA-256', () => {
    assert.equal(sha256('abc').toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.deepEqual(sha256(Buffer.from('abc')), sha256('abc'));
    assert.equal(sha256('').toString('hex'), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('parses a master key given as hex or base64 and refuses other lengths', () => {
    assert.equal(parseMasterKey('ab'.repeat(32)).length, 32);
    assert.equal(parseMasterKey(Buffer.alloc(32, 9).toString('base64')).length, 32);
    assert.throws(() => parseMasterKey('abcd'), /32 bytes/);
  });

  it('hands out pooled random bytes once each, across pool refills and for large requests', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) seen.add(randomBytesPooled(12).toString('hex'));
    assert.equal(seen.size, 5000);
    const big = randomBytesPooled(10_000);
    assert.equal(big.length, 10_000);
    assert.ok(new Set(big).size > 200, 'large draws are random too');
  });

  it('makes base62 tokens long enough for their entropy', () => {
    const t = randomToken(24);
    assert.match(t, /^[0-9A-Za-z]{33}$/);
    assert.notEqual(t, randomToken(24));
  });
});

describe('cursor', () => {
  const scope = { organizationId: 'org-1', list: 'customers', filters: [null, 'x'] };

  it('round-trips a keyset position', () => {
    const c = encodeCursor(keyring, scope, ['id-9', 3]);
    assert.deepEqual(decodeCursor(keyring, scope, c), ['id-9', 3]);
    assert.match(c, /^[A-Za-z0-9_-]+$/, 'base64url only');
  });

  it('refuses a cursor carried to another organisation, list or filter', () => {
    const c = encodeCursor(keyring, scope, ['id-9']);
    for (const other of [
      { ...scope, organizationId: 'org-2' },
      { ...scope, list: 'products' },
      { ...scope, filters: [null, 'y'] },
    ]) {
      assert.throws(() => decodeCursor(keyring, other, c), (e: unknown) => e instanceof DomainError && e.code === 'invalid_cursor');
    }
  });

  it('cuts a page fetched with limit + 1 rows', () => {
    assert.deepEqual(page([1, 2, 3], 3, String), { items: [1, 2, 3], nextCursor: null });
    assert.deepEqual(page([1, 2, 3, 4], 3, String), { items: [1, 2, 3], nextCursor: '3' });
  });
});

describe('ids', () => {
  it('makes RFC 9562 version-7 UUIDs that sort by creation', () => {
    const ids = Array.from({ length: 2000 }, () => uuidv7());
    for (const id of ids) assert.ok(isUuid(id) && id[14] === '7' && '89ab'.includes(id[19]!), id);
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(isUuid('not-a-uuid'), false);
  });
});

describe('canonical JSON for the idempotency hash', () => {
  it('ignores key order at every depth but not array order or values', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [1, 2], c: null } }), canonicalJson({ a: { c: null, d: [1, 2] }, b: 1 }));
    assert.notEqual(canonicalJson({ a: [1, 2] }), canonicalJson({ a: [2, 1] }));
    assert.notEqual(canonicalJson({ a: 1 }), canonicalJson({ a: '1' }));
    assert.equal(canonicalJson(undefined), 'null');
  });
});

describe('Semaphore', () => {
  it('admits up to its permits and queues the rest in order', async () => {
    const s = new Semaphore(2);
    assert.equal(s.acquire(), undefined);
    assert.equal(s.acquire(), undefined);
    const order: number[] = [];
    const w1 = s.acquire()!.then(() => order.push(1));
    const w2 = s.acquire()!.then(() => order.push(2));
    assert.equal(s.queued, 2);
    s.release();
    s.release();
    await Promise.all([w1, w2]);
    assert.deepEqual(order, [1, 2]);
    s.release();
    s.release();
    assert.equal(s.acquire(), undefined);
  });
});

describe('log redaction and bigint parsing', () => {
  it('masks e-mail and phone in logged URLs', () => {
    assert.equal(redactUrl('/v1/customers?email=a%40b.dk&limit=5&phone=123'), '/v1/customers?email=[redacted]&limit=5&phone=[redacted]');
    // Names are judged decoded, so an encoded name is no way around the mask.
    assert.equal(redactUrl('/v1/customers?e%6Dail=a%40b.dk'), '/v1/customers?email=[redacted]');
    assert.equal(redactUrl('/v1/customers?externalReference=crm-1&active=true'), '/v1/customers?externalReference=[redacted]&active=true');
    assert.equal(redactUrl('/v1/customers'), '/v1/customers');
  });

  it('parses bigint money within the safe range and refuses beyond it', () => {
    assert.equal(parseSafeBigint('9007199254740991'), 9007199254740991);
    assert.throws(() => parseSafeBigint('9007199254740993'), /safe integer/);
  });
});

describe('KeyedMutex', () => {
  it('runs one task per key at a time, in order, and keys apart in parallel; a failure does not block the queue', async () => {
    const { KeyedMutex } = await import('../../services/shared/keyed-mutex.ts');
    const m = new KeyedMutex();
    const log: string[] = [];
    const task = (name: string, ms: number, fail = false) => async () => {
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`end ${name}`);
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([m.run('a', task('a1', 30, true)), m.run('a', task('a2', 5)), m.run('b', task('b1', 5))]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'fulfilled', 'fulfilled']);
    assert.ok(log.indexOf('end a1') < log.indexOf('start a2'), log.join());
    assert.ok(log.indexOf('start b1') < log.indexOf('end a1'), log.join());
  });
});
