import assert from 'node:assert/strict';
import {
  call,
  createTestKey,
  createTestOrg,
  newIdempotencyKey,
  startTestApp,
  testDb,
  type ApiResponse,
  type TestApp,
  type TestOrg,
} from '../helpers/context.ts';

interface DbAccount {
  id: string;
  organization_id: string;
  account_number: string;
  name: string;
  active: boolean;
  created_at: Date;
}

async function dbAccounts(organizationId: string): Promise<DbAccount[]> {
  const { db } = testDb();
  return [
    ...(await db.sql<DbAccount[]>`
      SELECT id, organization_id, account_number, name, active, created_at
      FROM sales_accounts WHERE organization_id = ${organizationId} ORDER BY account_number, id`),
  ];
}

function assertError(res: ApiResponse, status: number, code: string, details?: { path: string; message: string }[]): void {
  assert.equal(res.status, status, res.raw);
  const error: Record<string, unknown> = { code, message: res.body.error.message, requestId: res.headers['request-id'] };
  if (details) error.details = details;
  assert.deepEqual(res.body, { error });
  const message: unknown = res.body.error.message;
  assert.ok(typeof message === 'string' && message.length > 0, 'the error message is a non-empty sentence');
}

describe('Sales accounts', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const create = (key: string, body: unknown, idempotencyKey?: string) =>
    call(t.app, 'POST', '/v1/accounts', { key, body, ...(idempotencyKey ? { idempotencyKey } : {}) });

  describe('POST /v1/accounts', () => {
    let org: TestOrg;
    before(async () => {
      org = await createTestOrg();
    });

    it('creates an account: 201 without Location, the full account, and the row', async () => {
      const res = await create(org.apiKey, { accountNumber: '1000', name: 'Salg af varer' });
      assert.equal(res.status, 201, res.raw);
      assert.equal(res.headers.location, undefined);
      const [row] = await dbAccounts(org.organizationId);
      assert.ok(row);
      assert.deepEqual(res.body, {
        data: { id: row.id, accountNumber: '1000', name: 'Salg af varer', active: true, createdAt: row.created_at.toISOString() },
        meta: {},
      });
      assert.deepEqual({ ...row, id: undefined, created_at: undefined }, {
        id: undefined,
        organization_id: org.organizationId,
        account_number: '1000',
        name: 'Salg af varer',
        active: true,
        created_at: undefined,
      });
    });

    it('accepts both fields at their bounds', async () => {
      for (const body of [
        { accountNumber: '9'.repeat(20), name: 'N'.repeat(200) },
        { accountNumber: 'A', name: 'n' },
      ]) {
        const res = await create(org.apiKey, body);
        assert.equal(res.status, 201, res.raw);
        const { id: _id, createdAt: _c, ...rest } = res.body.data;
        assert.deepEqual(rest, { ...body, active: true });
      }
    });

    const invalid: [string, Record<string, unknown>, string, string][] = [
      ['accountNumber missing', { accountNumber: undefined }, '/accountNumber', 'is required'],
      ['accountNumber empty', { accountNumber: '' }, '/accountNumber', 'must NOT have fewer than 1 characters'],
      ['accountNumber too long', { accountNumber: '1'.repeat(21) }, '/accountNumber', 'must NOT have more than 20 characters'],
      ['accountNumber as a number', { accountNumber: 1000 }, '/accountNumber', 'must be string'],
      ['name missing', { name: undefined }, '/name', 'is required'],
      ['name empty', { name: '' }, '/name', 'must NOT have fewer than 1 characters'],
      ['name too long', { name: 'N'.repeat(201) }, '/name', 'must NOT have more than 200 characters'],
      ['active on create', { active: false }, '/active', 'is not an allowed property'],
      ['unknown property', { vatCode: 'S25' }, '/vatCode', 'is not an allowed property'],
    ];
    for (const [label, change, path, message] of invalid) {
      it(`refuses ${label}: 400 validation_failed at ${path}, nothing stored`, async () => {
        const before = (await dbAccounts(org.organizationId)).length;
        const body = JSON.parse(JSON.stringify({ accountNumber: `B-${label}`.slice(0, 20), name: 'Bounds', ...change }));
        assertError(await create(org.apiKey, body), 400, 'validation_failed', [{ path, message }]);
        assert.equal((await dbAccounts(org.organizationId)).length, before);
      });
    }

    it('refuses a duplicate account number: 409 account_number_already_exists, one row @cluster', async () => {
      const first = await create(org.apiKey, { accountNumber: '2000', name: 'Salg af ydelser' });
      assert.equal(first.status, 201, first.raw);
      const res = await create(org.apiKey, { accountNumber: '2000', name: 'Something else' });
      assertError(res, 409, 'account_number_already_exists', [
        { path: '/accountNumber', message: 'is already used by another sales account' },
      ]);
      const rows = (await dbAccounts(org.organizationId)).filter((r) => r.account_number === '2000');
      assert.deepEqual(rows.map((r) => [r.id, r.name]), [[first.body.data.id, 'Salg af ydelser']]);
    });

    it('lets another organisation use the same account number', async () => {
      const other = await createTestOrg();
      const res = await create(other.apiKey, { accountNumber: '2000', name: 'Salg' });
      assert.equal(res.status, 201, res.raw);
      assert.deepEqual((await dbAccounts(other.organizationId)).map((r) => r.id), [res.body.data.id]);
    });

    it('replays an idempotent POST: same status and body, meta.replayed, one row @cluster', async () => {
      const idempotencyKey = newIdempotencyKey();
      const body = { accountNumber: '3000', name: 'Eksportsalg' };
      const first = await create(org.apiKey, body, idempotencyKey);
      assert.equal(first.status, 201, first.raw);
      const again = await create(org.apiKey, { ...body }, idempotencyKey);
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers.location, undefined);
      assert.deepEqual(again.body, { data: first.body.data, meta: { replayed: true } });
      const rows = (await dbAccounts(org.organizationId)).filter((r) => r.account_number === '3000');
      assert.equal(rows.length, 1);
      assertError(await create(org.apiKey, { ...body, name: 'Other' }, idempotencyKey), 409, 'idempotency_conflict');
    });

    it('needs products:write: 403 insufficient_scope, nothing stored', async () => {
      const key = await createTestKey(org, ['products:read', 'customers:write']);
      const before = (await dbAccounts(org.organizationId)).length;
      assertError(await create(key, { accountNumber: '4000', name: 'Nope' }), 403, 'insufficient_scope', [
        { path: '', message: 'required scope: products:write' },
      ]);
      assert.equal((await dbAccounts(org.organizationId)).length, before);
    });
  });

  describe('GET /v1/accounts', () => {
    let org: TestOrg;
    /** The account numbers, in the order the list must show them. */
    const numbers = ['1000', '1010', '1020', '2000', '2010', '3000', '4000'];
    const ids = new Map<string, string>();
    const list = (query: string, key = org.apiKey) => call(t.app, 'GET', `/v1/accounts${query}`, { key });
    const numbersOf = (res: ApiResponse): string[] => res.body.data.map((a: { accountNumber: string }) => a.accountNumber);

    before(async () => {
      org = await createTestOrg();
      // Created out of order: the list sorts by account number, not by creation.
      for (const n of ['3000', '1010', '4000', '1000', '2010', '1020', '2000']) {
        const res = await create(org.apiKey, { accountNumber: n, name: `Konto ${n}` });
        assert.equal(res.status, 201, res.raw);
        ids.set(n, res.body.data.id);
      }
      // The API has no way to deactivate an account yet; the filter must still honour the column.
      const { db } = testDb();
      await db.sql`UPDATE sales_accounts SET active = false WHERE organization_id = ${org.organizationId} AND account_number IN ('1010', '3000')`;
    });

    it('lists by account number with the full account shape and a null cursor on a single page', async () => {
      const res = await list('');
      assert.equal(res.status, 200, res.raw);
      const rows = await dbAccounts(org.organizationId);
      assert.deepEqual(res.body, {
        data: rows.map((r) => ({
          id: r.id,
          accountNumber: r.account_number,
          name: `Konto ${r.account_number}`,
          active: !['1010', '3000'].includes(r.account_number),
          createdAt: r.created_at.toISOString(),
        })),
        meta: { nextCursor: null },
      });
      assert.deepEqual(numbersOf(res), numbers);
    });

    it('pages 7 rows by 3 without skipping or repeating one, ending with nextCursor null', async () => {
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : '?limit=3';
        const res = await list(query);
        assert.equal(res.status, 200, res.raw);
        sizes.push(res.body.data.length);
        seen.push(...numbersOf(res));
        cursor = res.body.meta.nextCursor;
      } while (cursor !== null);
      assert.deepEqual(sizes, [3, 3, 1]);
      assert.deepEqual(seen, numbers);
    });

    it('filters active=false to inactive accounts and active=true to the others, also across pages', async () => {
      const inactive = await list('?active=false');
      assert.deepEqual(inactive.body.data.map((a: { id: string; active: boolean }) => [a.id, a.active]), [
        [ids.get('1010'), false],
        [ids.get('3000'), false],
      ]);
      const first = await list('?active=true&limit=3');
      assert.deepEqual(numbersOf(first), ['1000', '1020', '2000']);
      const second = await list(`?active=true&limit=3&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`);
      assert.deepEqual(numbersOf(second), ['2010', '4000']);
      assert.equal(second.body.meta.nextCursor, null);
      assert.ok([...first.body.data, ...second.body.data].every((a: { active: boolean }) => a.active));
    });

    it('orders account numbers by their value (300 before 2000), other numbers after them in text order, across pages', async () => {
      const chart = await createTestOrg();
      for (const n of ['2000', 'AB-1', '300', '0300', '10', '1000', 'A1', '99999999999999999999']) {
        const res = await call(t.app, 'POST', '/v1/accounts', { key: chart.apiKey, body: { accountNumber: n, name: `Konto ${n}` } });
        assert.equal(res.status, 201, res.raw);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
        const res = await list(query, chart.apiKey);
        assert.equal(res.status, 200, res.raw);
        seen.push(...numbersOf(res));
        cursor = res.body.meta.nextCursor;
      } while (cursor !== null);
      // 300 and 0300 have one value: the order between them is their ids' (creation) order.
      assert.deepEqual(seen, ['10', '300', '0300', '1000', '2000', '99999999999999999999', 'A1', 'AB-1']);
    });

    it("never lists another organisation's accounts", async () => {
      const other = await createTestOrg();
      const res = await list('', other.apiKey);
      assert.deepEqual(res.body, { data: [], meta: { nextCursor: null } });
    });

    it('refuses a cursor issued for another filter, list or organisation: 400 invalid_cursor', async () => {
      const unfiltered = (await list('?limit=3')).body.meta.nextCursor as string;
      const activeOnly = (await list('?active=true&limit=3')).body.meta.nextCursor as string;
      const other = await createTestOrg();
      const attempts: [string, string][] = [
        [`?active=true&limit=3&cursor=${encodeURIComponent(unfiltered)}`, org.apiKey],
        [`?active=false&limit=3&cursor=${encodeURIComponent(activeOnly)}`, org.apiKey],
        [`?limit=3&cursor=${encodeURIComponent(activeOnly)}`, org.apiKey],
        [`?limit=3&cursor=${encodeURIComponent(unfiltered)}`, other.apiKey],
        [`?limit=3&cursor=${encodeURIComponent(unfiltered.slice(0, -2))}`, org.apiKey],
      ];
      for (const [query, key] of attempts) assertError(await list(query, key), 400, 'invalid_cursor');
      const products = await call(t.app, 'GET', `/v1/products?cursor=${encodeURIComponent(unfiltered)}`, { key: org.apiKey });
      assertError(products, 400, 'invalid_cursor');
    });

    it('validates the query: 400 validation_failed', async () => {
      const cases: [string, string, string][] = [
        ['?active=yes', '/active', 'querystring must be boolean'],
        ['?limit=0', '/limit', 'querystring must be >= 1'],
        ['?limit=201', '/limit', 'querystring must be <= 200'],
        ['?accountNumber=1000', '/accountNumber', 'querystring is not an allowed property'],
      ];
      for (const [query, path, message] of cases) assertError(await list(query), 400, 'validation_failed', [{ path, message }]);
    });

    it('needs products:read: 403 insufficient_scope', async () => {
      const key = await createTestKey(org, ['products:write']);
      assertError(await list('', key), 403, 'insufficient_scope', [{ path: '', message: 'required scope: products:read' }]);
    });
  });
});
