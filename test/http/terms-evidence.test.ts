import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { acceptTerms } from '../../services/terms/accept-terms.ts';
import { call, createTestKey, createTestOrg, newIdempotencyKey, startTestApp, testDb, type ApiResponse, type TestApp, type TestOrg } from '../helpers/context.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HASH = createHash('sha256').update('Handelsbetingelser version 3, den præcise tekst').digest('hex');
const URL = '/v1/betingelse-accept';

let evidenceCounter = 0;
const evidenceKey = (): string => `ordre-${process.pid}-${Date.now()}-${++evidenceCounter}`;

/** POST /v1/betingelse-accept; the body's own key is fresh unless given. */
function accept(t: TestApp, key: string, body: Record<string, unknown>, opts: { idempotencyKey?: string | null } = {}): Promise<ApiResponse> {
  return call(t.app, 'POST', URL, { key, body, ...opts });
}

function assertError(res: ApiResponse, status: number, code: string, details?: { path: string; message?: string }[]): void {
  assert.equal(res.status, status, res.raw);
  assert.equal(res.body.error.code, code, res.raw);
  assert.equal(res.body.error.requestId, res.headers['request-id']);
  if (details) {
    // Compared by place (in any order); a message only where one is expected.
    const got = (res.body.error.details as { path: string; message: string }[]).map((d) => {
      const wanted = details.find((w) => w.path === d.path);
      return wanted?.message === undefined ? { path: d.path } : d;
    });
    const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);
    assert.deepEqual(got.sort(byPath), [...details].sort(byPath), res.raw);
  }
}

describe('terms evidence: POST /v1/betingelse-accept', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  let invoiceId: string;
  let otherInvoiceId: string;

  const draft = async (o: TestOrg): Promise<string> => {
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: o.apiKey, body: { type: 'person', name: 'Kunde' } })).body.data.id;
    const res = await call(t.app, 'POST', '/v1/invoices', { key: o.apiKey, body: { customerId, lines: [{ description: 'Vare', quantity: 1, unitPriceOere: 10_000 }] } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data.id;
  };
  const base = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    fakturaId: invoiceId,
    betingelseVersion: '2026-03',
    betingelseHash: HASH,
    accepteretKl: '2026-03-01T10:15:30.123Z',
    idempotensnoegle: evidenceKey(),
    ...over,
  });
  const rows = (key: string) =>
    testDb().db.sql`SELECT * FROM terms_evidence WHERE organization_id = ${org.organizationId} AND evidence_key = ${key}`;
  const termsTimeline = async (id: string) =>
    ((await call(t.app, 'GET', `/v1/invoices/${id}/timeline?limit=200`, { key: org.apiKey })).body.data as { code: string; at: string; data: unknown }[])
      .filter((i) => i.code === 'terms_accepted');

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
    other = await createTestOrg();
    invoiceId = await draft(org);
    otherInvoiceId = await draft(other);
  });
  after(() => t.close());

  describe('a new record: 201', () => {
    it('with fakturaId: the exact body, the row, and terms_accepted on the timeline in the same transaction', async () => {
      const inv = await draft(org);
      const body = base({ fakturaId: inv, eksternOrdreRef: undefined });
      const res = await accept(t, org.apiKey, body);
      assert.equal(res.status, 201, res.raw);
      const e = res.body.data;
      assert.match(e.id, UUID_RE);
      assert.match(e.createdAt, ISO_RE);
      assert.deepEqual(res.body, {
        data: {
          id: e.id, fakturaId: inv, eksternOrdreRef: null, betingelseVersion: '2026-03', betingelseHash: HASH,
          accepteretKl: '2026-03-01T10:15:30.123Z', idempotensnoegle: body.idempotensnoegle, createdAt: e.createdAt,
        },
        meta: {},
      });
      assert.equal(res.headers.location, undefined);
      const [row] = await rows(body.idempotensnoegle as string);
      assert.deepEqual({ ...row }, {
        organization_id: org.organizationId, id: e.id, invoice_id: inv, external_order_ref: null, terms_version: '2026-03',
        terms_hash: HASH, accepted_at: new Date('2026-03-01T10:15:30.123Z'), evidence_key: body.idempotensnoegle,
        created_at: new Date(e.createdAt),
      });
      const entries = await termsTimeline(inv);
      assert.deepEqual(entries, [{ code: 'terms_accepted', at: e.createdAt, data: { evidenceId: e.id, betingelseVersion: '2026-03' } }]);
    });

    it('with eksternOrdreRef only: fakturaId null, no timeline anywhere', async () => {
      const body = base({ fakturaId: undefined, eksternOrdreRef: 'webshop-ordre-1001' });
      const timelineBefore = (await testDb().db.sql`SELECT count(*)::int AS n FROM invoice_timeline WHERE organization_id = ${org.organizationId}`)[0]!.n;
      const res = await accept(t, org.apiKey, body);
      assert.equal(res.status, 201, res.raw);
      const e = res.body.data;
      assert.deepEqual(res.body, {
        data: {
          id: e.id, fakturaId: null, eksternOrdreRef: 'webshop-ordre-1001', betingelseVersion: '2026-03', betingelseHash: HASH,
          accepteretKl: '2026-03-01T10:15:30.123Z', idempotensnoegle: body.idempotensnoegle, createdAt: e.createdAt,
        },
        meta: {},
      });
      const [row] = await rows(body.idempotensnoegle as string);
      assert.equal(row!.invoice_id, null);
      assert.equal(row!.external_order_ref, 'webshop-ordre-1001');
      const timelineAfter = (await testDb().db.sql`SELECT count(*)::int AS n FROM invoice_timeline WHERE organization_id = ${org.organizationId}`)[0]!.n;
      assert.equal(timelineAfter, timelineBefore);
    });

    it('with both references, an upper-case invoice id, and the header key equal to the evidence key', async () => {
      const inv = await draft(org);
      const key = evidenceKey();
      const res = await accept(t, org.apiKey, base({ fakturaId: inv.toUpperCase(), eksternOrdreRef: 'ordre-7', idempotensnoegle: key }), { idempotencyKey: key });
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.body.data.fakturaId, inv);
      assert.equal(res.body.data.eksternOrdreRef, 'ordre-7');
      assert.equal((await termsTimeline(inv)).length, 1);
    });

    const instants: [string, string][] = [
      ['2026-03-01T12:15:30+02:00', '2026-03-01T10:15:30.000Z'],
      ['2026-03-01T00:15:30.5-01:30', '2026-03-01T01:45:30.500Z'],
      ['2026-03-01T10:15:30.123456Z', '2026-03-01T10:15:30.123456Z'],
      ['2026-03-01T10:15:30.1234565Z', '2026-03-01T10:15:30.123457Z'],
      ['2026-03-01T10:15:30.999999999+00:00', '2026-03-01T10:15:31.000Z'],
      ['2026-03-01t10:15:30z', '2026-03-01T10:15:30.000Z'],
      ['1969-12-31T23:59:59.999999Z', '1969-12-31T23:59:59.999999Z'],
      ['0001-01-01T01:00:00+01:00', '0001-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999999Z'],
    ];
    for (const [given, answered] of instants) {
      it(`accepteretKl ${given} is answered in UTC as ${answered}`, async () => {
        const body = base({ fakturaId: undefined, eksternOrdreRef: 'o', accepteretKl: given });
        const res = await accept(t, org.apiKey, body);
        assert.equal(res.status, 201, res.raw);
        assert.equal(res.body.data.accepteretKl, answered);
        const [row] = await testDb().db.sql`
          SELECT to_char(accepted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS t FROM terms_evidence
          WHERE organization_id = ${org.organizationId} AND evidence_key = ${body.idempotensnoegle as string}`;
        assert.equal(`${row!.t}Z`.replace(/000Z$/, 'Z'), answered);
      });
    }

    it('a key with only terms:accept is enough', async () => {
      const key = await createTestKey(org, ['terms:accept']);
      assert.equal((await accept(t, key, base())).status, 201);
    });
  });

  describe('validation: 400 validation_failed with a JSON pointer, nothing recorded', () => {
    const invalid: [string, Record<string, unknown>, string][] = [
      ['fakturaId not a UUID', { fakturaId: 'faktura-1' }, '/fakturaId'],
      ['fakturaId a number', { fakturaId: 42 }, '/fakturaId'],
      ['fakturaId null', { fakturaId: null, eksternOrdreRef: 'o' }, '/fakturaId'],
      ['empty eksternOrdreRef', { eksternOrdreRef: '' }, '/eksternOrdreRef'],
      ['eksternOrdreRef of 201', { eksternOrdreRef: 'r'.repeat(201) }, '/eksternOrdreRef'],
      ['betingelseVersion missing', { betingelseVersion: undefined }, '/betingelseVersion'],
      ['empty betingelseVersion', { betingelseVersion: '' }, '/betingelseVersion'],
      ['betingelseVersion of 101', { betingelseVersion: 'v'.repeat(101) }, '/betingelseVersion'],
      ['betingelseVersion a number', { betingelseVersion: 3 }, '/betingelseVersion'],
      ['betingelseHash missing', { betingelseHash: undefined }, '/betingelseHash'],
      ['betingelseHash of 63', { betingelseHash: HASH.slice(1) }, '/betingelseHash'],
      ['betingelseHash of 65', { betingelseHash: `${HASH}0` }, '/betingelseHash'],
      ['betingelseHash in upper case', { betingelseHash: HASH.toUpperCase() }, '/betingelseHash'],
      ['betingelseHash not hex', { betingelseHash: 'g'.repeat(64) }, '/betingelseHash'],
      ['accepteretKl missing', { accepteretKl: undefined }, '/accepteretKl'],
      ['accepteretKl without an offset', { accepteretKl: '2026-03-01T10:15:30' }, '/accepteretKl'],
      ['accepteretKl with fractions, without an offset', { accepteretKl: '2026-03-01T10:15:30.123' }, '/accepteretKl'],
      ['accepteretKl with an offset of hours only', { accepteretKl: '2026-03-01T10:15:30+02' }, '/accepteretKl'],
      ['accepteretKl with an offset without a colon', { accepteretKl: '2026-03-01T10:15:30+0200' }, '/accepteretKl'],
      ['accepteretKl a date only', { accepteretKl: '2026-03-01' }, '/accepteretKl'],
      ['accepteretKl with a space', { accepteretKl: '2026-03-01 10:15:30Z' }, '/accepteretKl'],
      ['accepteretKl an impossible date', { accepteretKl: '2026-02-30T10:15:30Z' }, '/accepteretKl'],
      ['accepteretKl at 24:00', { accepteretKl: '2026-03-01T24:00:00Z' }, '/accepteretKl'],
      ['accepteretKl a leap second', { accepteretKl: '2026-06-30T23:59:60Z' }, '/accepteretKl'],
      ['accepteretKl in year 0000', { accepteretKl: '0000-12-31T10:00:00Z' }, '/accepteretKl'],
      ['accepteretKl before year 1 in UTC', { accepteretKl: '0001-01-01T00:30:00+01:00' }, '/accepteretKl'],
      ['accepteretKl after year 9999 in UTC', { accepteretKl: '9999-12-31T23:30:00-01:00' }, '/accepteretKl'],
      ['accepteretKl a number', { accepteretKl: 1772360130 }, '/accepteretKl'],
      ['idempotensnoegle missing', { idempotensnoegle: undefined }, '/idempotensnoegle'],
      ['empty idempotensnoegle', { idempotensnoegle: '' }, '/idempotensnoegle'],
      ['idempotensnoegle of 201', { idempotensnoegle: 'k'.repeat(201) }, '/idempotensnoegle'],
      ['an unknown property', { kunde: 'x' }, '/kunde'],
      ['a property in another case', { FakturaId: invoiceIdPlaceholder() }, '/FakturaId'],
    ];
    for (const [what, over, path] of invalid) {
      it(`${what}: ${path}`, async () => {
        const body = base(over);
        const res = await accept(t, org.apiKey, body);
        assertError(res, 400, 'validation_failed', [{ path }]);
        assert.equal((await rows(String(body.idempotensnoegle))).length, 0);
      });
    }

    it('the boundary values pass: 200-character references and keys, a 100-character version', async () => {
      const body = base({ eksternOrdreRef: 'r'.repeat(200), betingelseVersion: 'v'.repeat(100), idempotensnoegle: `${evidenceKey()}-`.padEnd(200, 'k') });
      const res = await accept(t, org.apiKey, body);
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.body.data.idempotensnoegle.length, 200);
    });

    it('neither fakturaId nor eksternOrdreRef: one detail at the body', async () => {
      const res = await accept(t, org.apiKey, base({ fakturaId: undefined }));
      assertError(res, 400, 'validation_failed', [{ path: '', message: 'must have fakturaId or eksternOrdreRef (or both)' }]);
      assert.equal(res.body.error.message, 'body must have fakturaId or eksternOrdreRef (or both).');
    });

    it('neither reference and other faults: every place is named', async () => {
      const res = await accept(t, org.apiKey, base({ fakturaId: undefined, betingelseHash: 'x', extra: 1 }));
      assertError(res, 400, 'validation_failed', [{ path: '' }, { path: '/betingelseHash' }, { path: '/extra' }]);
    });

    it('an empty body and no body are 400 too; a validation failure does not consume the Idempotency-Key', async () => {
      assertError(await call(t.app, 'POST', URL, { key: org.apiKey, body: {} }), 400, 'validation_failed');
      assertError(await call(t.app, 'POST', URL, { key: org.apiKey }), 400, 'validation_failed');
      const header = newIdempotencyKey();
      const body = base();
      assertError(await accept(t, org.apiKey, { ...body, betingelseHash: 'x' }, { idempotencyKey: header }), 400, 'validation_failed');
      assert.equal((await accept(t, org.apiKey, body, { idempotencyKey: header })).status, 201);
    });

    it('without an Idempotency-Key: 400 idempotency_key_missing', async () => {
      assertError(await accept(t, org.apiKey, base(), { idempotencyKey: null }), 400, 'idempotency_key_missing');
    });
  });

  describe('body size: 32 KiB, checked before parsing', () => {
    /** A valid body padded with spaces (valid JSON whitespace) to exactly `bytes` bytes. */
    const padded = (body: Record<string, unknown>, bytes: number): string => {
      const json = JSON.stringify(body);
      return `${json.slice(0, -1)}${' '.repeat(bytes - Buffer.byteLength(json))}}`;
    };

    it('exactly 32 768 bytes pass (201)', async () => {
      const text = padded(base(), 32 * 1024);
      assert.equal(Buffer.byteLength(text), 32 * 1024);
      const res = await call(t.app, 'POST', URL, { key: org.apiKey, body: text });
      assert.equal(res.status, 201, res.raw);
    });

    it('32 769 bytes are 413 payload_too_large, nothing recorded', async () => {
      const body = base();
      const text = padded(body, 32 * 1024 + 1);
      assertError(await call(t.app, 'POST', URL, { key: org.apiKey, body: text }), 413, 'payload_too_large');
      assert.equal((await rows(String(body.idempotensnoegle))).length, 0);
    });

    it('an oversized body is 413 whatever it holds: not invalid_json, not validation_failed, and before the key check', async () => {
      const junk = `{${'x'.repeat(40 * 1024)}`;
      assertError(await call(t.app, 'POST', URL, { key: org.apiKey, body: junk }), 413, 'payload_too_large');
      const long = JSON.stringify(base({ betingelseVersion: 'v'.repeat(40 * 1024) }));
      assertError(await call(t.app, 'POST', URL, { key: org.apiKey, body: long, idempotencyKey: null }), 413, 'payload_too_large');
    });

    it('a body of 33 KiB that other routes would take (1 MiB) is 413 here only', async () => {
      const big = `{"type":"person","name":"Stor"${' '.repeat(33 * 1024)}}`;
      assert.equal((await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: big })).status, 201);
      assertError(await call(t.app, 'POST', URL, { key: org.apiKey, body: padded(base(), 33 * 1024) }), 413, 'payload_too_large');
    });
  });

  describe('the same idempotensnoegle', () => {
    it('same content under another header key: 200, the stored record, meta.replayed, one row and one timeline entry', async () => {
      const inv = await draft(org);
      const body = base({ fakturaId: inv, eksternOrdreRef: 'ordre-9' });
      const first = await accept(t, org.apiKey, body);
      assert.equal(first.status, 201, first.raw);
      // The same instant written with another offset is the same content.
      const again = await accept(t, org.apiKey, { ...body, accepteretKl: '2026-03-01T11:15:30.123+01:00' });
      assert.equal(again.status, 200, again.raw);
      assert.deepEqual(again.body, { data: first.body.data, meta: { replayed: true } });
      assert.equal((await rows(String(body.idempotensnoegle))).length, 1);
      assert.equal((await termsTimeline(inv)).length, 1);
    });

    it('the same Idempotency-Key replays the original response (201) with meta.replayed; another body under it is idempotency_conflict @cluster', async () => {
      const header = newIdempotencyKey();
      const body = base();
      const first = await accept(t, org.apiKey, body, { idempotencyKey: header });
      assert.equal(first.status, 201);
      const replay = await accept(t, org.apiKey, body, { idempotencyKey: header });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, { data: first.body.data, meta: { replayed: true } });
      assertError(await accept(t, org.apiKey, { ...body, betingelseVersion: 'other' }, { idempotencyKey: header }), 409, 'idempotency_conflict');
    });

    const changes: [string, Record<string, unknown>, string[]][] = [
      ['another version', { betingelseVersion: '2026-04' }, ['/betingelseVersion']],
      ['another hash', { betingelseHash: 'a'.repeat(64) }, ['/betingelseHash']],
      ['another instant', { accepteretKl: '2026-03-01T10:15:30.124Z' }, ['/accepteretKl']],
      ['another instant by a microsecond', { accepteretKl: '2026-03-01T10:15:30.123001Z' }, ['/accepteretKl']],
      ['an added order reference', { eksternOrdreRef: 'ordre-x' }, ['/eksternOrdreRef']],
      ['no invoice, an order reference instead', { fakturaId: undefined, eksternOrdreRef: 'ordre-x' }, ['/fakturaId', '/eksternOrdreRef']],
      ['another invoice', { fakturaId: 'INVOICE2' }, ['/fakturaId']],
    ];
    for (const [what, over, paths] of changes) {
      it(`other content (${what}): 409 evidence_conflict naming the fields, the record unchanged`, async () => {
        const body = base();
        const first = await accept(t, org.apiKey, body);
        assert.equal(first.status, 201);
        const inv2 = over.fakturaId === 'INVOICE2' ? await draft(org) : undefined;
        const changed = { ...body, ...over, ...(inv2 ? { fakturaId: inv2 } : {}) };
        const header = newIdempotencyKey();
        const res = await accept(t, org.apiKey, changed, { idempotencyKey: header });
        assertError(res, 409, 'evidence_conflict', paths.map((path) => ({ path, message: 'differs from the evidence recorded with this idempotensnoegle' })));
        const [row] = await rows(String(body.idempotensnoegle));
        assert.equal(row!.id, first.body.data.id);
        assert.equal(row!.terms_version, '2026-03');
        if (inv2) assert.deepEqual(await termsTimeline(inv2), []);
        // Remembered with the header key like every business refusal.
        const replay = await accept(t, org.apiKey, changed, { idempotencyKey: header });
        assert.equal(replay.status, 409);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
      });
    }

    it('belongs to the organisation: another organisation records its own evidence with the same key', async () => {
      const body = base({ fakturaId: undefined, eksternOrdreRef: 'fælles' });
      const mine = await accept(t, org.apiKey, body);
      const theirs = await accept(t, other.apiKey, { ...body, betingelseVersion: 'deres' });
      assert.equal(mine.status, 201);
      assert.equal(theirs.status, 201);
      assert.notEqual(theirs.body.data.id, mine.body.data.id);
    });

    it('concurrent duplicates under different header keys: one record, one 201, the rest 200 with it', async () => {
      const inv = await draft(org);
      const body = base({ fakturaId: inv });
      const results = await Promise.all(Array.from({ length: 12 }, () => accept(t, org.apiKey, body)));
      const statuses = results.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201], results.map((r) => r.raw).join('\n'));
      const created = results.find((r) => r.status === 201)!.body.data;
      for (const r of results) assert.deepEqual(r.body.data, created);
      assert.equal((await rows(String(body.idempotensnoegle))).length, 1);
      assert.equal((await termsTimeline(inv)).length, 1);
    });

    it('the race at the unique index: a second transaction waits for the first and answers from its record, or records its own if the first rolls back', async () => {
      const { db } = testDb();
      const inv = await draft(org);
      for (const firstCommits of [true, false]) {
        const body = base({ fakturaId: inv }) as Parameters<typeof acceptTerms>[2];
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let firstInserted!: () => void;
        const inserted = new Promise<void>((resolve) => (firstInserted = resolve));
        const first = db.tx(async (tx) => {
          const r = await acceptTerms(tx, org.organizationId, body);
          firstInserted();
          await held;
          if (!firstCommits) throw new Error('rolled back on purpose');
          return r;
        }).catch((err: Error) => err);
        await inserted;
        // The second has not seen the first's uncommitted row: it reaches the insert, which waits for the first.
        const second = db.tx((tx) => acceptTerms(tx, org.organizationId, body));
        await new Promise((r) => setTimeout(r, 100));
        release();
        const [a, b] = await Promise.all([first, second]);
        if (firstCommits) {
          assert.ok(!(a instanceof Error));
          assert.equal(a.replayed, false);
          assert.deepEqual(b, { evidence: a.evidence, replayed: true });
        } else {
          assert.ok(a instanceof Error);
          assert.equal(b.replayed, false);
        }
        assert.equal((await rows(body.idempotensnoegle)).length, 1);
      }
      assert.equal((await termsTimeline(inv)).length, 2);
    });

    it('concurrent requests with one key and different content: one record, the others 409 evidence_conflict', async () => {
      const key = evidenceKey();
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => accept(t, org.apiKey, base({ idempotensnoegle: key, betingelseVersion: `v${i}` }))));
      assert.equal(results.filter((r) => r.status === 201).length, 1, results.map((r) => r.raw).join('\n'));
      assert.equal(results.filter((r) => r.status === 409 && r.body.error.code === 'evidence_conflict').length, 7);
      assert.equal((await rows(key)).length, 1);
    });
  });

  describe('invoices and scopes', () => {
    const unknown = '0190a8a0-0000-7000-8000-000000000001';
    for (const [what, id] of [['another organisation\'s invoice', () => otherInvoiceId], ['an unknown invoice', () => unknown]] as const) {
      it(`${what}: 404 invoice_not_found, nothing recorded`, async () => {
        const body = base({ fakturaId: id(), eksternOrdreRef: 'ordre-1' });
        assertError(await accept(t, org.apiKey, body), 404, 'invoice_not_found');
        assert.equal((await rows(String(body.idempotensnoegle))).length, 0);
        const [n] = await testDb().db.sql`SELECT count(*)::int AS n FROM invoice_timeline WHERE invoice_id = ${otherInvoiceId} AND code = 'terms_accepted'`;
        assert.equal(n!.n, 0);
      });
    }

    it('a 404 does not hold the idempotensnoegle: the same key with an existing invoice is recorded', async () => {
      const key = evidenceKey();
      assertError(await accept(t, org.apiKey, base({ fakturaId: otherInvoiceId, idempotensnoegle: key })), 404, 'invoice_not_found');
      assert.equal((await accept(t, org.apiKey, base({ idempotensnoegle: key }))).status, 201);
    });

    it('needs terms:accept: 403 insufficient_scope naming it, nothing recorded', async () => {
      const key = await createTestKey(org, ['invoices:write', 'invoices:read', 'cases:write']);
      const body = base();
      assertError(await accept(t, key, body), 403, 'insufficient_scope', [{ path: '', message: 'required scope: terms:accept' }]);
      assert.equal((await rows(String(body.idempotensnoegle))).length, 0);
    });

    it('without a key: 401 unauthenticated', async () => {
      assertError(await call(t.app, 'POST', URL, { body: base() }), 401, 'unauthenticated');
    });
  });

  describe('write-once', () => {
    it('the database refuses UPDATE, DELETE and TRUNCATE of a record', async () => {
      const body = base();
      const res = await accept(t, org.apiKey, body);
      assert.equal(res.status, 201);
      const { sql } = testDb().db;
      const refused = async (q: Promise<unknown>, op: string) =>
        assert.rejects(q, (err: Error & { code?: string }) => {
          assert.equal(err.code, '42501');
          assert.match(err.message, new RegExp(`terms evidence is write-once: ${op} is not allowed`));
          return true;
        });
      await refused(sql`UPDATE terms_evidence SET terms_version = 'forged' WHERE organization_id = ${org.organizationId} AND id = ${res.body.data.id}`, 'UPDATE');
      await refused(sql`DELETE FROM terms_evidence WHERE organization_id = ${org.organizationId} AND id = ${res.body.data.id}`, 'DELETE');
      await refused(sql`TRUNCATE terms_evidence`, 'TRUNCATE');
      const [row] = await rows(String(body.idempotensnoegle));
      assert.equal(row!.terms_version, '2026-03');
    });

    it('a draft with evidence can still be deleted; the evidence stays', async () => {
      const inv = await draft(org);
      const body = base({ fakturaId: inv });
      const first = await accept(t, org.apiKey, body);
      assert.equal(first.status, 201);
      assert.equal((await call(t.app, 'DELETE', `/v1/invoices/${inv}`, { key: org.apiKey })).status, 204);
      assert.equal((await rows(String(body.idempotensnoegle))).length, 1);
      // The record is still the answer to its key.
      const again = await accept(t, org.apiKey, body);
      assert.equal(again.status, 200);
      assert.deepEqual(again.body.data, first.body.data);
    });
  });
});

/** A well-formed id for a body refused before any look-up. */
function invoiceIdPlaceholder(): string {
  return '0190a8a0-0000-7000-8000-000000000002';
}
