import assert from 'node:assert/strict';
import {
  call,
  createTestKey,
  createTestOrg,
  newIdempotencyKey,
  startTestApp,
  testDb,
  type ApiResponse,
  type CallOptions,
  type TestApp,
  type TestOrg,
} from '../helpers/context.ts';
import { addDays } from '../../services/shared/clock.ts';
import { timeBarredOn } from '../../services/law/danish-law.ts';
import { TEST_MASTER_KEY } from '../helpers/context.ts';
import { createKeyring } from '../../services/shared/crypto.ts';

/**
 * POST /v1/cases and GET /v1/cases/{id} (docs/api-conventions.md, "Collection cases"; docs/collections.md):
 * the body's bounds with their pointers, the 64 KiB limit, the claims' due dates against the organisation's today,
 * the status object, replays and conflicts by externalReference, the gap-free case numbers, sag.oprettet, and the
 * personal data: encrypted at rest, and the CPR number nowhere but in its ciphertext.
 */
describe('Collection cases', () => {
  let t: TestApp;
  let org: TestOrg;
  const sql = () => testDb().db.sql;
  const keyring = createKeyring(TEST_MASTER_KEY);
  /** Every response of this suite, for the CPR grep at the end. */
  const responses: string[] = [];
  const CPR = '0707071234';
  const NAME = 'Skyldner Sørensen-Kastrup';
  const EMAIL = 'skyldner.kastrup@privat-eksempel.dk';
  const MOBIL = '+4571727374';
  const STREET = 'Inkassovej 77, 3. th.';
  let today: string;

  const api = async (method: string, url: string, opts: CallOptions & { key?: string | null } = {}): Promise<ApiResponse> => {
    const res = await call(t.app, method, url, { key: org.apiKey, ...opts });
    responses.push(res.raw, JSON.stringify(res.headers));
    return res;
  };
  const createAs = (o: TestOrg, body: unknown, idempotencyKey?: string) =>
    api('POST', '/v1/cases', { key: o.apiKey, body, ...(idempotencyKey ? { idempotencyKey } : {}) });
  const create = (body: unknown, idempotencyKey?: string) => createAs(org, body, idempotencyKey);

  let refCounter = 0;
  const ref = () => `sag-${process.pid}-${++refCounter}`;
  const claim = (over: Record<string, unknown> = {}) => ({ hovedstolOere: 125_000, forfaldsdato: addDays(today, -30), ...over });
  const person = (over: Record<string, unknown> = {}) => ({ skyldnerType: 'person', navn: NAME, cpr: CPR, ...over });
  const body = (over: Record<string, unknown> = {}) => ({ fordringer: [claim()], skyldnere: [person()], externalReference: ref(), ...over });

  function assertError(res: ApiResponse, status: number, code: string, details?: { path: string; message: string }[]): void {
    assert.equal(res.status, status, res.raw);
    const error: Record<string, unknown> = { code, message: res.body.error.message, requestId: res.headers['request-id'] };
    if (details) error.details = details;
    assert.deepEqual(res.body, { error });
    assert.ok(typeof res.body.error.message === 'string' && res.body.error.message.length > 0, 'the message is a sentence');
  }

  const casesOf = async (o: TestOrg) => [
    ...(await sql()<{ id: string; case_number: number; external_reference: string }[]>`
      SELECT id, case_number, external_reference FROM collection_cases WHERE organization_id = ${o.organizationId} ORDER BY case_number`),
  ];

  before(async () => {
    t = await startTestApp({}, { logLevel: 'debug' });
    org = await createTestOrg();
    today = (await api('GET', '/v1/test-clock')).body.data.today as string;
  });
  after(() => t.close());

  describe('creating a case', () => {
    it('answers 201 with the status object and Location, stores the case in OPRETTET and reads it back', async () => {
      const o = await createTestOrg();
      const externalReference = ref();
      const adresse = { gade: STREET, postnummer: '8000', by: 'Aarhus C', land: 'Danmark', darId: '0a3f507a-b2e6-32b8-e044-0003ba298018', kommunekode: '0751' };
      const input = {
        fordringer: [
          { hovedstolOere: 125_000, forfaldsdato: addDays(today, -40), fakturadato: addDays(today, -54), beskrivelse: 'Faktura 1001, husleje' },
          { hovedstolOere: 1, forfaldsdato: addDays(today, -1) },
        ],
        skyldnere: [
          person({ adresse, email: EMAIL, mobil: MOBIL }),
          { skyldnerType: 'virksomhed', navn: 'Skyldner ApS', cvr: '87654321' },
        ],
        externalReference,
      };
      const res = await createAs(o, input);
      assert.equal(res.status, 201, res.raw);
      const id = res.body.data.id as string;
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(res.headers.location, `/v1/cases/${id}`);
      assert.equal(res.headers['idempotent-replayed'], undefined);
      const { createdAt } = res.body.data;
      assert.match(createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(res.body, {
        data: {
          id, caseNumber: 1, externalReference, fakturaId: null, state: 'OPRETTET', status: 'aktiv', paakravFrist: null,
          eventVersion: 1, createdAt, updatedAt: createdAt,
        },
        meta: {},
      });
      const read = await api('GET', `/v1/cases/${id}`, { key: o.apiKey });
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, { data: res.body.data, meta: {} });

      const [row] = await sql()<Record<string, unknown>[]>`
        SELECT case_number, external_reference, invoice_id, state, paakrav_sent_on, paakrav_frist, handed_over_at, closed_at,
               body_mac IS NOT NULL AS has_mac
        FROM collection_cases WHERE organization_id = ${o.organizationId} AND id = ${id}`;
      assert.deepEqual(row, {
        case_number: 1, external_reference: externalReference, invoice_id: null, state: 'OPRETTET', paakrav_sent_on: null,
        paakrav_frist: null, handed_over_at: null, closed_at: null, has_mac: true,
      });
      const claims = await sql()<{ position: number; principal_oere: number; due_date: string; invoice_date: string | null; description_enc: Buffer | null }[]>`
        SELECT position, principal_oere, due_date, invoice_date, description_enc FROM case_claims
        WHERE organization_id = ${o.organizationId} AND case_id = ${id} ORDER BY position`;
      assert.deepEqual(
        claims.map((c) => [c.position, c.principal_oere, c.due_date, c.invoice_date, c.description_enc && keyring.decrypt(c.description_enc)]),
        [[0, 125_000, addDays(today, -40), addDays(today, -54), 'Faktura 1001, husleje'], [1, 1, addDays(today, -1), null, null]],
      );
      const debtors = await sql()<Record<string, Buffer | string | number | null>[]>`
        SELECT position, debtor_type, name_enc, cvr, cpr_enc, address_enc, email_enc, phone_enc FROM case_debtors
        WHERE organization_id = ${o.organizationId} AND case_id = ${id} ORDER BY position`;
      const plain = (b: unknown) => (b === null ? null : keyring.decrypt(b as Buffer));
      assert.deepEqual(
        debtors.map((d) => [d.position, d.debtor_type, plain(d.name_enc), d.cvr, plain(d.cpr_enc), plain(d.address_enc), plain(d.email_enc), plain(d.phone_enc)]),
        [
          [0, 'person', NAME, null, CPR, JSON.stringify(adresse), EMAIL, MOBIL],
          [1, 'virksomhed', 'Skyldner ApS', '87654321', null, null, null, null],
        ],
      );
      // The ciphertext is AES-256-GCM: version byte, nonce, text, tag; the clear bytes are nowhere in the row.
      const d0 = debtors[0]!;
      for (const [column, clear] of [['name_enc', NAME], ['cpr_enc', CPR], ['email_enc', EMAIL], ['phone_enc', MOBIL], ['address_enc', STREET]] as const) {
        const blob = d0[column] as Buffer;
        assert.equal(blob[0], 1, column);
        assert.ok(!blob.includes(Buffer.from(clear, 'utf8')), `${column} holds its clear text`);
      }
    });

    it('writes sag.oprettet in the same transaction: block sag {id, sekvensnummer 1}, data without personal data', async () => {
      const o = await createTestOrg();
      const input = body();
      const res = await createAs(o, input);
      assert.equal(res.status, 201, res.raw);
      const id = res.body.data.id as string;
      const feed = await api('GET', '/v1/events?type=sag.oprettet', { key: o.apiKey });
      assert.equal(feed.status, 200, feed.raw);
      assert.equal(feed.body.data.length, 1);
      const event = feed.body.data[0];
      assert.deepEqual(Object.keys(event), ['id', 'type', 'timestamp', 'organizationId', 'sag', 'data']);
      assert.deepEqual(event, {
        id: event.id,
        type: 'sag.oprettet',
        timestamp: event.timestamp,
        organizationId: o.organizationId,
        sag: { id, sekvensnummer: 1 },
        data: { caseNumber: 1, state: 'OPRETTET', status: 'aktiv', fakturaId: null, externalReference: input.externalReference },
      });
      const rows = await sql()<{ type: string; entity_family: string; entity_id: string; sekvensnummer: number }[]>`
        SELECT type, entity_family, entity_id, sekvensnummer FROM events WHERE organization_id = ${o.organizationId}`;
      assert.deepEqual([...rows], [{ type: 'sag.oprettet', entity_family: 'sag', entity_id: id, sekvensnummer: 1 }]);
    });

    it('numbers cases 1, 2, 3… per organisation, without gaps when creations race or are refused @cluster', async () => {
      const [a, b] = [await createTestOrg(), await createTestOrg()];
      for (const n of [1, 2, 3]) assert.equal((await createAs(a, body())).body.data.caseNumber, n);
      assert.equal((await createAs(b, body())).body.data.caseNumber, 1);
      // A refused creation takes no number.
      assertError(await createAs(a, body({ fordringer: [claim({ forfaldsdato: today })] })), 422, 'invoice_not_due', [
        { path: '/fordringer/0/forfaldsdato', message: `is not before today (${today}): the claim is not due yet` },
      ]);
      const raced = await Promise.all(Array.from({ length: 12 }, () => createAs(a, body())));
      assert.deepEqual(raced.map((r) => r.status), Array(12).fill(201));
      assert.deepEqual(raced.map((r) => r.body.data.caseNumber as number).sort((x, y) => x - y), Array.from({ length: 12 }, (_, i) => i + 4));
      assert.deepEqual((await casesOf(a)).map((c) => c.case_number), Array.from({ length: 15 }, (_, i) => i + 1));
      assert.equal((await createAs(b, body())).body.data.caseNumber, 2);
    });
  });

  describe('replays and conflicts by externalReference', () => {
    it('the same body under another key is 200 with the existing case and meta.replayed; key order does not matter', async () => {
      const input = body({ skyldnere: [person({ adresse: { gade: STREET, by: 'Aarhus C' } })] });
      const first = await create(input);
      assert.equal(first.status, 201, first.raw);
      const reordered = { externalReference: input.externalReference, skyldnere: [{ cpr: CPR, adresse: { by: 'Aarhus C', gade: STREET }, navn: NAME, skyldnerType: 'person' }], fordringer: input.fordringer };
      for (const again of [input, reordered]) {
        const res = await create(again);
        assert.equal(res.status, 200, res.raw);
        assert.equal(res.headers.location, `/v1/cases/${first.body.data.id}`);
        assert.deepEqual(res.body, { data: first.body.data, meta: { replayed: true } });
      }
      // Another body under a key already used is the key's own conflict, whatever its externalReference.
      const key = newIdempotencyKey();
      assert.equal((await create(body(), key)).status, 201);
      assertError(await create(body(), key), 409, 'idempotency_conflict');
      assert.equal((await casesOf(org)).filter((c) => c.external_reference === input.externalReference).length, 1);
    });

    it('the same key and body replays the original 201 with Idempotent-Replayed', async () => {
      const key = newIdempotencyKey();
      const input = body();
      const first = await create(input, key);
      const again = await create(input, key);
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers.location, first.headers.location);
      assert.deepEqual(again.body, { data: first.body.data, meta: { replayed: true } });
    });

    it('another body with the same externalReference is 409 case_conflict, and nothing changes', async () => {
      const input = body();
      const first = await create(input);
      assert.equal(first.status, 201);
      for (const other of [
        { ...input, fordringer: [claim({ hovedstolOere: 125_001 })] },
        { ...input, skyldnere: [person({ cpr: '0707071235' })] },
        { ...input, skyldnere: [person({ email: EMAIL })] },
      ]) {
        assertError(await create(other), 409, 'case_conflict', [{ path: '/externalReference', message: 'is the reference of another case' }]);
      }
      assert.equal((await casesOf(org)).filter((c) => c.external_reference === input.externalReference).length, 1);
      assert.deepEqual((await api('GET', `/v1/cases/${first.body.data.id}`)).body.data, first.body.data);
    });

    it('racing creations with one externalReference make one case; the others replay it @cluster', async () => {
      const o = await createTestOrg();
      const input = body();
      const results = await Promise.all(Array.from({ length: 10 }, () => createAs(o, input)));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
      assert.equal(new Set(results.map((r) => r.body.data.id)).size, 1);
      assert.deepEqual((await casesOf(o)).map((c) => c.case_number), [1]);
      const [{ count }] = (await sql()<{ count: number }[]>`SELECT count(*)::int AS count FROM events WHERE organization_id = ${o.organizationId}`) as unknown as [{ count: number }];
      assert.equal(count, 1);
    });
  });

  describe('validation (400 validation_failed, each bound at its pointer)', () => {
    const s = (n: number) => 'x'.repeat(n);
    const claims = (n: number) => Array.from({ length: n }, () => claim());
    const debtors = (n: number) => Array.from({ length: n }, () => person());
    const withClaim3 = (over: Record<string, unknown>) => body({ fordringer: [claim(), claim(), claim(), claim(over)] });
    const withDebtor = (over: Record<string, unknown>) => body({ skyldnere: [person(over)] });
    const withAddress = (adresse: Record<string, unknown>) => body({ skyldnere: [person({ adresse })] });
    const dropped = (key: string, from: Record<string, unknown>) => Object.fromEntries(Object.entries(from).filter(([k]) => k !== key));

    const cases: [string, () => unknown, string][] = [
      ['fordringer missing', () => dropped('fordringer', body()), '/fordringer'],
      ['no claim', () => body({ fordringer: [] }), '/fordringer'],
      ['51 claims', () => body({ fordringer: claims(51) }), '/fordringer'],
      ['hovedstolOere missing', () => body({ fordringer: [claim(), claim(), claim(), dropped('hovedstolOere', claim())] }), '/fordringer/3/hovedstolOere'],
      ['hovedstolOere 0', () => withClaim3({ hovedstolOere: 0 }), '/fordringer/3/hovedstolOere'],
      ['hovedstolOere over 100000000000', () => withClaim3({ hovedstolOere: 100_000_000_001 }), '/fordringer/3/hovedstolOere'],
      ['hovedstolOere not an integer', () => withClaim3({ hovedstolOere: 1.5 }), '/fordringer/3/hovedstolOere'],
      ['hovedstolOere a string', () => withClaim3({ hovedstolOere: '100' }), '/fordringer/3/hovedstolOere'],
      ['forfaldsdato missing', () => body({ fordringer: [claim(), claim(), claim(), dropped('forfaldsdato', claim())] }), '/fordringer/3/forfaldsdato'],
      ['forfaldsdato not a date', () => withClaim3({ forfaldsdato: '2026-02-30' }), '/fordringer/3/forfaldsdato'],
      ['fakturadato not a date', () => withClaim3({ fakturadato: '1.2.2026' }), '/fordringer/3/fakturadato'],
      ['beskrivelse empty', () => withClaim3({ beskrivelse: '' }), '/fordringer/3/beskrivelse'],
      ['beskrivelse 301', () => withClaim3({ beskrivelse: s(301) }), '/fordringer/3/beskrivelse'],
      ['claim unknown key', () => withClaim3({ renteOere: 5 }), '/fordringer/3/renteOere'],
      ['skyldnere missing', () => dropped('skyldnere', body()), '/skyldnere'],
      ['no debtor', () => body({ skyldnere: [] }), '/skyldnere'],
      ['21 debtors', () => body({ skyldnere: debtors(21) }), '/skyldnere'],
      ['skyldnerType missing', () => body({ skyldnere: [dropped('skyldnerType', person())] }), '/skyldnere/0/skyldnerType'],
      ['skyldnerType unknown', () => withDebtor({ skyldnerType: 'firma' }), '/skyldnere/0/skyldnerType'],
      ['navn missing', () => body({ skyldnere: [dropped('navn', person())] }), '/skyldnere/0/navn'],
      ['navn empty', () => withDebtor({ navn: '' }), '/skyldnere/0/navn'],
      ['navn 201', () => withDebtor({ navn: s(201) }), '/skyldnere/0/navn'],
      ['cvr 7 digits', () => withDebtor({ cvr: '1234567' }), '/skyldnere/0/cvr'],
      ['cvr 9 digits', () => withDebtor({ cvr: '123456789' }), '/skyldnere/0/cvr'],
      ['cvr letters', () => withDebtor({ cvr: '1234567a' }), '/skyldnere/0/cvr'],
      ['cpr 65', () => withDebtor({ cpr: s(65) }), '/skyldnere/0/cpr'],
      ['adresse not an object', () => withDebtor({ adresse: 'Vej 1' }), '/skyldnere/0/adresse'],
      ['gade 201', () => withAddress({ gade: s(201) }), '/skyldnere/0/adresse/gade'],
      ['postnummer 11', () => withAddress({ postnummer: s(11) }), '/skyldnere/0/adresse/postnummer'],
      ['by 101', () => withAddress({ by: s(101) }), '/skyldnere/0/adresse/by'],
      ['land 101', () => withAddress({ land: s(101) }), '/skyldnere/0/adresse/land'],
      ['darId 37', () => withAddress({ darId: s(37) }), '/skyldnere/0/adresse/darId'],
      ['kommunekode 3 digits', () => withAddress({ kommunekode: '751' }), '/skyldnere/0/adresse/kommunekode'],
      ['kommunekode 5 digits', () => withAddress({ kommunekode: '07510' }), '/skyldnere/0/adresse/kommunekode'],
      ['kommunekode letters', () => withAddress({ kommunekode: '07a1' }), '/skyldnere/0/adresse/kommunekode'],
      ['kommunekode a number', () => withAddress({ kommunekode: 751 }), '/skyldnere/0/adresse/kommunekode'],
      ['address unknown key', () => withAddress({ husnummer: '7' }), '/skyldnere/0/adresse/husnummer'],
      ['email 255', () => withDebtor({ email: s(255) }), '/skyldnere/0/email'],
      ['mobil 21', () => withDebtor({ mobil: s(21) }), '/skyldnere/0/mobil'],
      ['debtor unknown key', () => withDebtor({ telefon: '12345678' }), '/skyldnere/0/telefon'],
      ['externalReference missing', () => dropped('externalReference', body()), '/externalReference'],
      ['externalReference empty', () => body({ externalReference: '' }), '/externalReference'],
      ['externalReference 121', () => body({ externalReference: s(121) }), '/externalReference'],
      ['unknown top-level key', () => body({ fakturaId: '0190b5d2-0000-7000-8000-000000000000' }), '/fakturaId'],
    ];
    for (const [name, make, pointer] of cases) {
      it(`${name}: ${pointer}`, async () => {
        const res = await create(make());
        assert.equal(res.status, 400, res.raw);
        assert.equal(res.body.error.code, 'validation_failed');
        assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), [pointer], res.raw);
      });
    }

    it('a refused body stores nothing and does not consume the key', async () => {
      const o = await createTestOrg();
      const key = newIdempotencyKey();
      const input = body();
      assert.equal((await createAs(o, { ...input, externalReference: '' }, key)).status, 400);
      assert.deepEqual(await casesOf(o), []);
      assert.equal((await createAs(o, input, key)).status, 201);
    });
  });

  describe('body size: 64 KiB, checked before parsing', () => {
    /** Every field at its largest: 50 claims, 20 debtors. */
    const maximal = (externalReference: string) => ({
      fordringer: Array.from({ length: 50 }, (_, i) => ({
        hovedstolOere: 100_000_000_000, forfaldsdato: addDays(today, -1 - i), fakturadato: addDays(today, -30 - i), beskrivelse: 'b'.repeat(300),
      })),
      skyldnere: Array.from({ length: 20 }, (_, i) => ({
        skyldnerType: i % 2 === 0 ? 'person' : 'virksomhed', navn: 'n'.repeat(200), cvr: '12345678', cpr: `${CPR}${'c'.repeat(54)}`,
        adresse: { gade: 'g'.repeat(200), postnummer: 'p'.repeat(10), by: 'y'.repeat(100), land: 'l'.repeat(100), darId: 'd'.repeat(36), kommunekode: '0101' },
        email: 'e'.repeat(254), mobil: 'm'.repeat(20),
      })),
      externalReference,
    });
    const padded = (value: unknown, bytes: number): string => {
      const text = JSON.stringify(value);
      assert.ok(Buffer.byteLength(text) <= bytes, `${Buffer.byteLength(text)} bytes already`);
      return text + ' '.repeat(bytes - Buffer.byteLength(text));
    };

    it('a body of exactly 64 KiB (every field at its bound, padded with whitespace) is created', async () => {
      const externalReference = `max-${ref()}`.padEnd(120, 'r');
      const text = padded(maximal(externalReference), 65_536);
      const res = await create(text);
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.body.data.externalReference, externalReference);
      const [{ claims, debtors }] = (await sql()<{ claims: number; debtors: number }[]>`
        SELECT (SELECT count(*)::int FROM case_claims WHERE case_id = ${res.body.data.id}) AS claims,
               (SELECT count(*)::int FROM case_debtors WHERE case_id = ${res.body.data.id}) AS debtors`) as unknown as [{ claims: number; debtors: number }];
      assert.deepEqual({ claims, debtors }, { claims: 50, debtors: 20 });
    });

    it('one byte more is 413 payload_too_large, also when the bytes are not JSON, and nothing is stored', async () => {
      const o = await createTestOrg();
      const over = await createAs(o, padded(maximal(ref()), 65_537));
      assertError(over, 413, 'payload_too_large');
      // Not parsed: 64 KiB + 1 of text that is no JSON is refused for its size, not as invalid JSON.
      assertError(await createAs(o, `{${'x'.repeat(65_536)}`), 413, 'payload_too_large');
      assert.deepEqual(await casesOf(o), []);
    });
  });

  describe("claims against the organisation's today (422)", () => {
    it('a claim due 3 years or more before today is claim_time_barred at its forfaldsdato', async () => {
      const threeYears = `${Number(today.slice(0, 4)) - 3}${today.slice(4)}`;
      // Due exactly 3 years back: barred today (timeBarredOn, the rule the dunning engine uses).
      assert.ok(timeBarredOn(threeYears) <= today);
      assertError(
        await create(body({ fordringer: [claim(), claim(), claim({ forfaldsdato: threeYears }), claim({ forfaldsdato: addDays(threeYears, -400) })] })),
        422,
        'claim_time_barred',
        [
          { path: '/fordringer/2/forfaldsdato', message: `is 3 years or more before today (${today}): the claim is time-barred` },
          { path: '/fordringer/3/forfaldsdato', message: `is 3 years or more before today (${today}): the claim is time-barred` },
        ],
      );
      // A day later it is not barred yet.
      assert.equal((await create(body({ fordringer: [claim({ forfaldsdato: addDays(threeYears, 1) })] }))).status, 201);
    });

    it('a claim due today or later is invoice_not_due at its forfaldsdato; the first refused claim decides the code', async () => {
      assertError(await create(body({ fordringer: [claim(), claim({ forfaldsdato: addDays(today, 30) })] })), 422, 'invoice_not_due', [
        { path: '/fordringer/1/forfaldsdato', message: `is not before today (${today}): the claim is not due yet` },
      ]);
      const mixed = await create(body({ fordringer: [claim({ forfaldsdato: today }), claim({ forfaldsdato: '2000-01-01' })] }));
      assertError(mixed, 422, 'invoice_not_due', [
        { path: '/fordringer/0/forfaldsdato', message: `is not before today (${today}): the claim is not due yet` },
      ]);
    });

    it("follows the organisation's business clock (a sandbox test clock advanced)", async () => {
      const o = await createTestOrg();
      const input = body({ fordringer: [claim({ forfaldsdato: addDays(today, 2) })] });
      assert.equal((await createAs(o, input)).body.error.code, 'invoice_not_due');
      const advanced = await api('POST', '/v1/test-clock/advance', { key: o.apiKey, body: { days: 3 } });
      assert.equal(advanced.status, 200, advanced.raw);
      assert.equal((await createAs(o, input)).status, 201);
    });

    it('a refusal is remembered with its key, like other business refusals', async () => {
      const key = newIdempotencyKey();
      const input = body({ fordringer: [claim({ forfaldsdato: today })] });
      const first = await create(input, key);
      const again = await create(input, key);
      assert.equal(again.status, 422);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body.error.details, first.body.error.details);
    });
  });

  describe('reading a case', () => {
    it("an unknown id, another organisation's id and a malformed id are the same 404 case_not_found", async () => {
      const other = await createTestOrg();
      const theirs = await createAs(other, body());
      assert.equal(theirs.status, 201);
      const answers = [
        await api('GET', `/v1/cases/${theirs.body.data.id}`),
        await api('GET', '/v1/cases/0190b5d2-0000-7000-8000-000000000000'),
        await api('GET', '/v1/cases/not-a-uuid'),
        await api('GET', `/v1/cases/${theirs.body.data.id}x`),
      ];
      for (const res of answers) {
        assertError(res, 404, 'case_not_found');
        assert.equal(res.body.error.message, answers[0]!.body.error.message);
      }
    });
  });

  describe('scopes', () => {
    it('POST needs cases:write and GET needs cases:read (403 insufficient_scope, nothing stored)', async () => {
      const o = await createTestOrg();
      const readOnly = await createTestKey(o, ['cases:read']);
      const writeOnly = await createTestKey(o, ['cases:write']);
      assertError(await api('POST', '/v1/cases', { key: readOnly, body: body() }), 403, 'insufficient_scope', [
        { path: '', message: 'required scope: cases:write' },
      ]);
      assert.deepEqual(await casesOf(o), []);
      const created = await api('POST', '/v1/cases', { key: writeOnly, body: body() });
      assert.equal(created.status, 201, created.raw);
      assertError(await api('GET', `/v1/cases/${created.body.data.id}`, { key: writeOnly }), 403, 'insufficient_scope', [
        { path: '', message: 'required scope: cases:read' },
      ]);
      assert.equal((await api('GET', `/v1/cases/${created.body.data.id}`, { key: readOnly })).status, 200);
      assertError(await api('GET', `/v1/cases/${created.body.data.id}`, { key: null }), 401, 'unauthenticated');
    });
  });

  describe('CPR and personal data', () => {
    it('the CPR number is in no log line, no event, no response, and in no table but as ciphertext', async () => {
      // Make sure this suite's CPR went through a 201, a replay, a conflict, a 400 and a 422 before looking.
      const input = body({ skyldnere: [person({ email: EMAIL, mobil: MOBIL, adresse: { gade: STREET } })] });
      assert.equal((await create(input)).status, 201);
      assert.equal((await create(input)).status, 200);
      assert.equal((await create({ ...input, fordringer: [claim({ hovedstolOere: 7 })] })).status, 409);
      assert.equal((await create({ ...input, externalReference: '' })).status, 400);
      assert.equal((await create({ ...body(), fordringer: [claim({ forfaldsdato: today })] })).status, 422);
      const count = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM case_debtors WHERE organization_id = ${org.organizationId} AND cpr_enc IS NOT NULL`;
      assert.ok(count[0]!.n > 5);

      const logs = t.logs();
      assert.ok(logs.includes('/v1/cases'), 'the requests were logged');
      const needles = [CPR, NAME, EMAIL, MOBIL, STREET];
      for (const needle of needles) assert.ok(!logs.includes(needle), `the logs contain ${needle}`);
      assert.ok(responses.length > 100);
      for (const needle of needles) assert.ok(!responses.some((r) => r.includes(needle)), `a response contains ${needle}`);
      const events = await sql()<{ data: unknown }[]>`SELECT data FROM events WHERE entity_family = 'sag'`;
      assert.ok(events.length > 10);
      for (const needle of needles) assert.ok(!JSON.stringify(events).includes(needle), `an event contains ${needle}`);

      // Every text, JSON and byte column of every table: neither the CPR nor the name, e-mail, phone or street.
      const columns = await sql()<{ table_name: string; column_name: string }[]>`
        SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type IN ('text', 'jsonb', 'bytea', 'character varying')`;
      for (const needle of needles) {
        for (const { table_name, column_name } of columns) {
          const rows = await sql().unsafe(
            `SELECT 1 FROM "${table_name}" WHERE position(convert_to($1, 'UTF8') in
               CASE WHEN pg_typeof("${column_name}")::text = 'bytea' THEN "${column_name}"::text::bytea ELSE convert_to("${column_name}"::text, 'UTF8') END) > 0 LIMIT 1`,
            [needle],
          );
          assert.equal(rows.length, 0, `${needle} found in ${table_name}.${column_name}`);
        }
      }
    });
  });
});
