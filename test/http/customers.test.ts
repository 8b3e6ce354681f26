import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const full = {
  type: 'company',
  name: 'Bager Hansen ApS',
  cvr: '87654321',
  address: { street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', country: 'DK' },
  email: 'Bogholderi@Bager-Hansen.dk',
  phone: '+45 12 34 56 78',
  contactPerson: 'Jens Hansen',
  language: 'da',
  externalReference: 'crm-4711',
  metadata: { segment: 'bakery', 'region.code': '82' },
};

describe('customers', () => {
  let t: TestApp;
  let org: TestOrg;
  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
  });
  after(() => t.close());

  describe('POST /v1/customers', () => {
    it('creates a customer with every field and answers 201 with Location @cluster', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: full });
      assert.equal(res.status, 201);
      const c = res.body.data;
      assert.match(c.id, UUID_RE);
      assert.equal(res.headers.location, `/v1/customers/${c.id}`);
      assert.deepEqual(res.body, {
        data: { id: c.id, ...full, ean: null, peppolId: null, vatNumber: null, hasCpr: false, createdAt: c.createdAt, updatedAt: c.updatedAt },
        meta: {},
      });
      assert.match(c.createdAt, ISO_RE);
      const [row] = await testDb().db.sql`SELECT organization_id, name, cvr FROM customers WHERE id = ${c.id}`;
      assert.deepEqual({ ...row }, { organization_id: org.organizationId, name: full.name, cvr: full.cvr });
    });

    it('fills omitted optional fields with null', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'Ida' } });
      assert.equal(res.status, 201);
      const c = res.body.data;
      assert.deepEqual(c, {
        id: c.id, type: 'person', name: 'Ida', cvr: null, address: null, email: null, phone: null, contactPerson: null,
        language: null, externalReference: null, metadata: null, ean: null, peppolId: null, vatNumber: null, hasCpr: false,
        createdAt: c.createdAt, updatedAt: c.updatedAt,
      });
    });

    const invalid: [string, Record<string, unknown>, string][] = [
      ['type missing', { name: 'X' }, '/type'],
      ['name missing', { type: 'person' }, '/name'],
      ['unknown type', { type: 'robot', name: 'X' }, '/type'],
      ['empty name', { type: 'person', name: '' }, '/name'],
      ['name of 201 characters', { type: 'person', name: 'n'.repeat(201) }, '/name'],
      ['cvr of 7 digits', { type: 'company', name: 'X', cvr: '1234567' }, '/cvr'],
      ['cvr with letters', { type: 'company', name: 'X', cvr: '1234567a' }, '/cvr'],
      ['unknown address key', { type: 'person', name: 'X', address: { street: 'a', floor: '2' } }, '/address/floor'],
      ['street of 201', { type: 'person', name: 'X', address: { street: 's'.repeat(201) } }, '/address/street'],
      ['postal code of 11', { type: 'person', name: 'X', address: { postalCode: '1'.repeat(11) } }, '/address/postalCode'],
      ['city of 101', { type: 'person', name: 'X', address: { city: 'c'.repeat(101) } }, '/address/city'],
      ['country of 101', { type: 'person', name: 'X', address: { country: 'c'.repeat(101) } }, '/address/country'],
      ['email of 255', { type: 'person', name: 'X', email: `${'e'.repeat(245)}@example.dk` }, '/email'],
      ['phone of 31', { type: 'person', name: 'X', phone: '1'.repeat(31) }, '/phone'],
      ['contact person of 201', { type: 'person', name: 'X', contactPerson: 'c'.repeat(201) }, '/contactPerson'],
      ['language de', { type: 'person', name: 'X', language: 'de' }, '/language'],
      ['empty externalReference', { type: 'person', name: 'X', externalReference: '' }, '/externalReference'],
      ['externalReference of 201', { type: 'person', name: 'X', externalReference: 'r'.repeat(201) }, '/externalReference'],
      ['metadata key of 41', { type: 'person', name: 'X', metadata: { ['k'.repeat(41)]: 'v' } }, `/metadata/${'k'.repeat(41)}`],
      ['metadata empty key', { type: 'person', name: 'X', metadata: { '': 'v' } }, '/metadata/'],
      ['metadata value of 501', { type: 'person', name: 'X', metadata: { k: 'v'.repeat(501) } }, '/metadata/k'],
      ['metadata number value', { type: 'person', name: 'X', metadata: { k: 1 } }, '/metadata/k'],
      ['unknown property', { type: 'person', name: 'X', nickname: 'Y' }, '/nickname'],
      ['cpr is not writable', { type: 'person', name: 'X', cpr: '0101011234' }, '/cpr'],
      ['hasCpr is not writable', { type: 'person', name: 'X', hasCpr: true }, '/hasCpr'],
    ];
    for (const [what, body, path] of invalid) {
      it(`refuses ${what} with 400 validation_failed at ${path}`, async () => {
        const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body });
        assert.equal(res.status, 400);
        assert.equal(res.body.error.code, 'validation_failed');
        // Exactly the offending place: no "must be null" or "must match a schema in anyOf" beside it.
        assert.deepEqual(res.body.error.details.map((d: { path: string }) => d.path), [path], JSON.stringify(res.body.error.details));
      });
    }

    it('tells which values a nullable set of literals takes, null included', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'X', language: 'de' } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body.error.details, [{ path: '/language', message: 'must be one of: da, en, null' }]);
      assert.equal(res.body.error.message, '/language must be one of: da, en, null.');
    });

    it('names a metadata key that breaks its bounds by its own path, and says it is the key', async () => {
      const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'X', metadata: { ['k/'.repeat(21)]: 'v' } } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body.error.details, [{ path: `/metadata/${'k~1'.repeat(21)}`, message: 'key must NOT have more than 40 characters' }]);
    });

    it('accepts every bound at its limit', async () => {
      const body = {
        type: 'company', name: 'n'.repeat(200), cvr: '00000000',
        address: { street: 's'.repeat(200), postalCode: 'p'.repeat(10), city: 'c'.repeat(100), country: 'c'.repeat(100) },
        email: `${'e'.repeat(243)}@example.dk`, phone: '1'.repeat(30), contactPerson: 'c'.repeat(200), language: 'en',
        externalReference: 'r'.repeat(200), metadata: { ['k'.repeat(40)]: 'v'.repeat(500) },
      };
      assert.equal(body.email.length, 254);
      const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body });
      assert.equal(res.status, 201);
      assert.equal(res.body.data.email, body.email);
    });

    it('takes any e-mail string up to 254 characters (no format rule), back exactly as written', async () => {
      for (const email of ['not-an-address', 'e'.repeat(254)]) {
        const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'X', email } });
        assert.equal(res.status, 201, email);
        assert.equal(res.body.data.email, email);
      }
    });
  });

  describe('PATCH /v1/customers/{id}', () => {
    it('keeps omitted fields, clears null ones and replaces given ones; last write wins @cluster', async () => {
      const created = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: full })).body.data;
      const res = await call(t.app, 'PATCH', `/v1/customers/${created.id}`, {
        key: org.apiKey,
        body: { phone: null, address: { city: 'Odense' }, name: 'Bager Hansen & Søn ApS' },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data, {
        ...created, phone: null, address: { city: 'Odense' }, name: 'Bager Hansen & Søn ApS', updatedAt: res.body.data.updatedAt,
      });
      assert.ok(res.body.data.updatedAt >= created.updatedAt);
      const second = await call(t.app, 'PATCH', `/v1/customers/${created.id}`, { key: org.apiKey, body: { name: 'Last' } });
      assert.equal(second.body.data.name, 'Last');
      const read = await call(t.app, 'GET', `/v1/customers/${created.id}`, { key: org.apiKey });
      assert.deepEqual(read.body.data, second.body.data);
    });

    it('accepts an empty patch and changes nothing but updatedAt', async () => {
      const created = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: full })).body.data;
      const res = await call(t.app, 'PATCH', `/v1/customers/${created.id}`, { key: org.apiKey, body: {} });
      assert.equal(res.status, 200);
      assert.deepEqual({ ...res.body.data, updatedAt: created.updatedAt }, created);
    });

    it('refuses null for required fields and unknown properties', async () => {
      const created = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: full })).body.data;
      for (const body of [{ name: null }, { type: null }, { id: created.id }, { hasCpr: false }]) {
        const res = await call(t.app, 'PATCH', `/v1/customers/${created.id}`, { key: org.apiKey, body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.error.code, 'validation_failed');
      }
    });

    it('answers 404 customer_not_found for an unknown or malformed id', async () => {
      for (const id of ['0190a8a0-0000-7000-8000-000000000000', 'not-a-uuid', 'a'.repeat(5000)]) {
        const res = await call(t.app, 'PATCH', `/v1/customers/${id}`, { key: org.apiKey, body: { name: 'X' } });
        assert.equal(res.status, 404);
        assert.equal(res.body.error.code, 'customer_not_found');
      }
    });
  });

  describe('GET /v1/customers', () => {
    let other: TestOrg;
    before(async () => {
      other = await createTestOrg();
      for (const c of [
        { type: 'company', name: 'A', cvr: '11111111', email: 'a@x.dk', externalReference: 'ext-a' },
        { type: 'company', name: 'B', cvr: '11111111', email: 'A@x.dk', externalReference: 'ext-b' },
        { type: 'person', name: 'C', email: 'c@x.dk', externalReference: 'ext-c' },
      ]) {
        assert.equal((await call(t.app, 'POST', '/v1/customers', { key: other.apiKey, body: c })).status, 201);
      }
    });

    it('lists newest first with meta.nextCursor null on the last page', async () => {
      const res = await call(t.app, 'GET', '/v1/customers', { key: other.apiKey });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.map((c: { name: string }) => c.name), ['C', 'B', 'A']);
      assert.deepEqual(res.body.meta, { nextCursor: null });
    });

    it('filters exactly by cvr, email (case-sensitive, as written) and externalReference', async () => {
      const names = async (q: string) =>
        (await call(t.app, 'GET', `/v1/customers?${q}`, { key: other.apiKey })).body.data.map((c: { name: string }) => c.name);
      assert.deepEqual(await names('cvr=11111111'), ['B', 'A']);
      assert.deepEqual(await names('email=a%40x.dk'), ['A']);
      assert.deepEqual(await names('email=A%40x.dk'), ['B']);
      assert.deepEqual(await names('email=x.dk'), []);
      assert.deepEqual(await names('externalReference=ext-c'), ['C']);
      assert.deepEqual(await names('externalReference=ext'), []);
      assert.deepEqual(await names('cvr=11111111&externalReference=ext-a'), ['A']);
    });

    it('refuses limits outside 1..200 and unknown query parameters', async () => {
      for (const q of ['limit=0', 'limit=201', 'limit=abc', 'name=A']) {
        const res = await call(t.app, 'GET', `/v1/customers?${q}`, { key: other.apiKey });
        assert.equal(res.status, 400, q);
        assert.equal(res.body.error.code, 'validation_failed');
      }
      assert.equal((await call(t.app, 'GET', '/v1/customers?limit=200', { key: other.apiKey })).status, 200);
      assert.equal((await call(t.app, 'GET', '/v1/customers?limit=1', { key: other.apiKey })).body.data.length, 1);
    });
  });

  describe('GET /v1/customers, the page\'s bytes', () => {
    it('answers each customer in exactly the bytes GET /v1/customers/{id} answers it, and the cursor as given @cluster', async () => {
      const own = await createTestOrg();
      for (const body of [
        full,
        { ...full, name: 'Only "postal" \\ code', address: { postalCode: '1000' }, metadata: { b: '2', a: '1', '10': 'x' } },
        { type: 'person', name: 'Ægir Ø 😀', address: { country: 'SE', city: 'Malmö' }, language: 'en', email: 'ægir@søstrene.dk' },
        { type: 'person', name: 'Bare' },
      ]) {
        assert.equal((await call(t.app, 'POST', '/v1/customers', { key: own.apiKey, body })).status, 201);
      }
      for (const q of ['', '?limit=2']) {
        const list = await call(t.app, 'GET', `/v1/customers${q}`, { key: own.apiKey });
        assert.equal(list.status, 200);
        const singles = await Promise.all(
          list.body.data.map((c: { id: string }) => call(t.app, 'GET', `/v1/customers/${c.id}`, { key: own.apiKey })),
        );
        const items = singles.map((r) => {
          assert.ok(r.raw.startsWith('{"data":{') && r.raw.endsWith('},"meta":{}}'), r.raw);
          return r.raw.slice('{"data":'.length, -',"meta":{}}'.length);
        });
        assert.equal(list.raw, `{"data":[${items.join(',')}],"meta":{"nextCursor":${JSON.stringify(list.body.meta.nextCursor)}}}`);
        assert.equal(list.headers['content-type'], singles[0]!.headers['content-type']);
      }
    });
  });

  describe('departments', () => {
    let customerId: string;
    before(async () => {
      customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Dept Co' } })).body.data.id;
    });

    it('creates departments (201, no Location) and lists them by sortOrder, then name', async () => {
      const made = [];
      for (const d of [
        { name: 'Økonomi', sortOrder: 2 },
        { name: 'Indkøb', sortOrder: 1, contactPerson: 'Lise', reference: 'PO-1', email: 'indkob@dept.dk' },
        { name: 'Administration', sortOrder: 2 },
        { name: 'Lager' },
      ]) {
        const res = await call(t.app, 'POST', `/v1/customers/${customerId}/departments`, { key: org.apiKey, body: d });
        assert.equal(res.status, 201);
        assert.equal(res.headers.location, undefined);
        made.push(res.body.data);
      }
      assert.deepEqual(made[1], {
        id: made[1].id, customerId, name: 'Indkøb', contactPerson: 'Lise', reference: 'PO-1', email: 'indkob@dept.dk',
        sortOrder: 1, createdAt: made[1].createdAt,
      });
      assert.equal(made[3].sortOrder, 0);
      const res = await call(t.app, 'GET', `/v1/customers/${customerId}/departments`, { key: org.apiKey });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.map((d: { name: string }) => d.name), ['Lager', 'Indkøb', 'Administration', 'Økonomi']);
      const page1 = await call(t.app, 'GET', `/v1/customers/${customerId}/departments?limit=3`, { key: org.apiKey });
      const page2 = await call(t.app, 'GET', `/v1/customers/${customerId}/departments?limit=3&cursor=${page1.body.meta.nextCursor}`, { key: org.apiKey });
      assert.deepEqual([...page1.body.data, ...page2.body.data].map((d: { name: string }) => d.name), ['Lager', 'Indkøb', 'Administration', 'Økonomi']);
      assert.equal(page2.body.meta.nextCursor, null);
    });

    it('enforces the department bounds', async () => {
      for (const [body, path] of [
        [{}, '/name'],
        [{ name: '' }, '/name'],
        [{ name: 'n'.repeat(201) }, '/name'],
        [{ name: 'x', contactPerson: 'c'.repeat(201) }, '/contactPerson'],
        [{ name: 'x', reference: 'r'.repeat(141) }, '/reference'],
        [{ name: 'x', email: `${'e'.repeat(250)}@x.dk` }, '/email'],
        [{ name: 'x', sortOrder: -1 }, '/sortOrder'],
        [{ name: 'x', sortOrder: 10000 }, '/sortOrder'],
        [{ name: 'x', sortOrder: 1.5 }, '/sortOrder'],
        [{ name: 'x', floor: 3 }, '/floor'],
      ] as const) {
        const res = await call(t.app, 'POST', `/v1/customers/${customerId}/departments`, { key: org.apiKey, body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), JSON.stringify(res.body.error.details));
      }
    });

    it('deletes with 204 and no body, idempotently, and hides deleted departments', async () => {
      const dep = (await call(t.app, 'POST', `/v1/customers/${customerId}/departments`, { key: org.apiKey, body: { name: 'Temp' } })).body.data;
      const first = await call(t.app, 'DELETE', `/v1/customers/${customerId}/departments/${dep.id}`, { key: org.apiKey });
      assert.equal(first.status, 204);
      assert.equal(first.raw, '');
      const again = await call(t.app, 'DELETE', `/v1/customers/${customerId}/departments/${dep.id}`, { key: org.apiKey });
      assert.equal(again.status, 204);
      const list = await call(t.app, 'GET', `/v1/customers/${customerId}/departments`, { key: org.apiKey });
      assert.ok(!list.body.data.some((d: { id: string }) => d.id === dep.id));
    });

    it('answers 404 department_not_found for a department that never existed and customer_not_found for an unknown customer', async () => {
      const unknown = '0190a8a0-0000-7000-8000-000000000001';
      const res = await call(t.app, 'DELETE', `/v1/customers/${customerId}/departments/${unknown}`, { key: org.apiKey });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'department_not_found');
      for (const [method, url] of [
        ['GET', `/v1/customers/${unknown}/departments`],
        ['POST', `/v1/customers/${unknown}/departments`],
        ['DELETE', `/v1/customers/${unknown}/departments/${unknown}`],
      ] as const) {
        const r = await call(t.app, method, url, { key: org.apiKey, body: method === 'POST' ? { name: 'x' } : undefined });
        assert.equal(r.status, 404, `${method} ${url}`);
        assert.equal(r.body.error.code, 'customer_not_found');
      }
    });

    it('needs customers:read to list and customers:write to change', async () => {
      const readOnly = await createTestKey(org, ['customers:read']);
      const writeOnly = await createTestKey(org, ['customers:write']);
      assert.equal((await call(t.app, 'GET', `/v1/customers/${customerId}/departments`, { key: readOnly })).status, 200);
      const denied = await call(t.app, 'POST', `/v1/customers/${customerId}/departments`, { key: readOnly, body: { name: 'x' } });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'insufficient_scope');
      assert.match(JSON.stringify(denied.body.error.details), /customers:write/);
      const deniedRead = await call(t.app, 'GET', `/v1/customers/${customerId}/departments`, { key: writeOnly });
      assert.equal(deniedRead.status, 403);
      assert.match(JSON.stringify(deniedRead.body.error.details), /customers:read/);
    });
  });
});
