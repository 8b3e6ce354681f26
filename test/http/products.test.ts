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

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface DbProduct {
  organization_id: string;
  sku: string;
  name: string;
  unit_price_oere: number;
  vat_rate_bps: number;
  vat_exemption_reason: string | null;
  account: number | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

async function dbProduct(id: string): Promise<DbProduct | undefined> {
  const { db } = testDb();
  const [row] = await db.sql<DbProduct[]>`
    SELECT organization_id, sku, name, unit_price_oere, vat_rate_bps, vat_exemption_reason, account, active, created_at, updated_at
    FROM products WHERE id = ${id}`;
  return row;
}

async function productCount(organizationId: string): Promise<number> {
  const { db } = testDb();
  const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM products WHERE organization_id = ${organizationId}`;
  return row!.n;
}

function assertError(res: ApiResponse, status: number, code: string, details?: { path: string; message: string }[]): void {
  assert.equal(res.status, status, res.raw);
  const error: Record<string, unknown> = { code, message: res.body.error.message, requestId: res.headers['request-id'] };
  if (details) error.details = details;
  assert.deepEqual(res.body, { error });
  const message: unknown = res.body.error.message;
  assert.ok(typeof message === 'string' && message.length > 0, 'the error message is a non-empty sentence');
}

const widget = { sku: 'WIDGET-1', name: 'Widget', unitPriceOere: 12500, vatRateBps: 2500, account: 1010 };

describe('Products', () => {
  let t: TestApp;
  let org: TestOrg;
  let other: TestOrg;
  let seq = 0;
  const sku = (prefix = 'SKU') => `${prefix}-${++seq}`;

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
    other = await createTestOrg();
  });
  after(() => t.close());

  const create = (body: unknown, key = org.apiKey) => call(t.app, 'POST', '/v1/products', { key, body });
  const patch = (id: string, body: unknown, key = org.apiKey) => call(t.app, 'PATCH', `/v1/products/${id}`, { key, body });

  describe('POST /v1/products', () => {
    it('creates a product: 201, Location, the full product, and the row', async () => {
      const res = await create({ ...widget, sku: 'WIDGET-1' });
      assert.equal(res.status, 201, res.raw);
      const id = res.body.data.id as string;
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(res.headers.location, `/v1/products/${id}`);
      const row = await dbProduct(id);
      assert.deepEqual(res.body, {
        data: {
          id,
          sku: 'WIDGET-1',
          name: 'Widget',
          unitPriceOere: 12500,
          vatRateBps: 2500,
          vatExemptionReason: null,
          account: 1010,
          active: true,
          createdAt: row!.created_at.toISOString(),
          updatedAt: row!.updated_at.toISOString(),
        },
        meta: {},
      });
      assert.match(res.body.data.createdAt, ISO);
      assert.deepEqual(
        { ...row, created_at: undefined, updated_at: undefined },
        {
          organization_id: org.organizationId,
          sku: 'WIDGET-1',
          name: 'Widget',
          unit_price_oere: 12500,
          vat_rate_bps: 2500,
          vat_exemption_reason: null,
          account: 1010,
          active: true,
          created_at: undefined,
          updated_at: undefined,
        },
      );
    });

    it('accepts every field at its upper bound, and a zero rate with an exemption reason', async () => {
      const body = {
        sku: 'X'.repeat(60),
        name: 'N'.repeat(200),
        unitPriceOere: 100000000000,
        vatRateBps: 0,
        vatExemptionReason: 'EKSPORT',
        account: 999999999,
      };
      const res = await create(body);
      assert.equal(res.status, 201, res.raw);
      const { id, createdAt, updatedAt, ...rest } = res.body.data;
      assert.deepEqual(rest, { ...body, active: true });
      assert.equal(createdAt, updatedAt);
      const row = await dbProduct(id);
      assert.equal(row!.unit_price_oere, 100000000000);
      assert.equal(row!.vat_exemption_reason, 'EKSPORT');
      assert.equal(row!.account, 999999999);
    });

    it('accepts every field at its lower bound, with account and reason omitted', async () => {
      const res = await create({ sku: 'a', name: 'b', unitPriceOere: 0, vatRateBps: 1 });
      assert.equal(res.status, 201, res.raw);
      const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = res.body.data;
      assert.deepEqual(rest, { sku: 'a', name: 'b', unitPriceOere: 0, vatRateBps: 1, vatExemptionReason: null, account: null, active: true });
    });

    it('a PATCH is partial for the VAT fields too: a new rate keeps the reason it does not mention', async () => {
      const exempt = (await create({ ...widget, sku: sku('KEEPS'), vatRateBps: 0, vatExemptionReason: 'EKSPORT' })).body.data;
      const res = await patch(exempt.id, { vatRateBps: 2500 });
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.data.vatRateBps, res.body.data.vatExemptionReason], [2500, 'EKSPORT']);
      const row = await dbProduct(exempt.id);
      assert.deepEqual([row!.vat_rate_bps, row!.vat_exemption_reason], [2500, 'EKSPORT']);
    });

    const invalid: [string, Record<string, unknown>, string, string][] = [
      ['sku missing', { sku: undefined }, '/sku', 'is required'],
      ['sku empty', { sku: '' }, '/sku', 'must NOT have fewer than 1 characters'],
      ['sku too long', { sku: 'S'.repeat(61) }, '/sku', 'must NOT have more than 60 characters'],
      ['sku null', { sku: null }, '/sku', 'must be string'],
      ['name missing', { name: undefined }, '/name', 'is required'],
      ['name empty', { name: '' }, '/name', 'must NOT have fewer than 1 characters'],
      ['name too long', { name: 'N'.repeat(201) }, '/name', 'must NOT have more than 200 characters'],
      ['unitPriceOere missing', { unitPriceOere: undefined }, '/unitPriceOere', 'is required'],
      ['unitPriceOere negative', { unitPriceOere: -1 }, '/unitPriceOere', 'must be >= 0'],
      ['unitPriceOere too large', { unitPriceOere: 100000000001 }, '/unitPriceOere', 'must be <= 100000000000'],
      ['unitPriceOere fractional', { unitPriceOere: 1.5 }, '/unitPriceOere', 'must be integer'],
      ['unitPriceOere as text', { unitPriceOere: '100' }, '/unitPriceOere', 'must be integer'],
      ['vatRateBps missing', { vatRateBps: undefined }, '/vatRateBps', 'is required'],
      ['vatRateBps negative', { vatRateBps: -1 }, '/vatRateBps', 'must be >= 0'],
      ['vatRateBps over 100 %', { vatRateBps: 10001 }, '/vatRateBps', 'must be <= 10000'],
      ['vatExemptionReason unknown', { vatExemptionReason: 'ML14' }, '/vatExemptionReason', 'must be one of: ML13, OMVENDT, EU_VARE, EKSPORT, null'],
      ['account negative', { account: -1 }, '/account', 'must be >= 0'],
      ['account too large', { account: 1000000000 }, '/account', 'must be <= 999999999'],
      ['account as text', { account: '1010' }, '/account', 'must be integer'],
      ['active on create', { active: true }, '/active', 'is not an allowed property'],
      ['unknown property', { colour: 'red' }, '/colour', 'is not an allowed property'],
    ];
    for (const [label, change, path, message] of invalid) {
      it(`refuses ${label}: 400 validation_failed at ${path}, nothing stored`, async () => {
        const before = await productCount(org.organizationId);
        const body = { ...widget, sku: sku('BOUND'), ...change };
        const res = await create(JSON.parse(JSON.stringify(body)));
        assertError(res, 400, 'validation_failed', [{ path, message }]);
        assert.equal(await productCount(org.organizationId), before);
      });
    }

    it('does not consume the Idempotency-Key on a validation failure', async () => {
      const idempotencyKey = newIdempotencyKey();
      const body = { ...widget, sku: sku() };
      const bad = await call(t.app, 'POST', '/v1/products', { key: org.apiKey, idempotencyKey, body: { ...body, vatRateBps: 10001 } });
      assert.equal(bad.status, 400);
      const good = await call(t.app, 'POST', '/v1/products', { key: org.apiKey, idempotencyKey, body });
      assert.equal(good.status, 201, good.raw);
    });

    it('requires a vatExemptionReason for a zero rate: 422 vat_exemption_reason_required', async () => {
      const before = await productCount(org.organizationId);
      for (const reason of [undefined, null]) {
        const res = await create({ ...widget, sku: sku(), vatRateBps: 0, vatExemptionReason: reason });
        assertError(res, 422, 'vat_exemption_reason_required', [
          { path: '/vatExemptionReason', message: 'is required when vatRateBps is 0' },
        ]);
      }
      assert.equal(await productCount(org.organizationId), before);
    });

    it('stores a vatExemptionReason beside a non-zero rate as given (the rule only requires it for 0)', async () => {
      const res = await create({ ...widget, sku: sku(), vatRateBps: 2500, vatExemptionReason: 'ML13' });
      assert.equal(res.status, 201, res.raw);
      assert.deepEqual([res.body.data.vatRateBps, res.body.data.vatExemptionReason], [2500, 'ML13']);
    });

    it('refuses a SKU that exists in another case: 409 sku_already_exists, one row @cluster', async () => {
      const first = await create({ ...widget, sku: 'Dup-Sku' });
      assert.equal(first.status, 201, first.raw);
      const res = await create({ ...widget, sku: 'dUP-sKU', name: 'Other' });
      assertError(res, 409, 'sku_already_exists', [{ path: '/sku', message: 'is already used by another product' }]);
      const exact = await create({ ...widget, sku: 'Dup-Sku' });
      assertError(exact, 409, 'sku_already_exists', [{ path: '/sku', message: 'is already used by another product' }]);
      const { db } = testDb();
      const rows = await db.sql`SELECT id, sku FROM products WHERE organization_id = ${org.organizationId} AND lower(sku) = 'dup-sku'`;
      assert.deepEqual([...rows], [{ id: first.body.data.id, sku: 'Dup-Sku' }]);
    });

    it('lets another organisation use the same SKU', async () => {
      const mine = await create({ ...widget, sku: 'SHARED-SKU' });
      assert.equal(mine.status, 201, mine.raw);
      const theirs = await create({ ...widget, sku: 'shared-sku' }, other.apiKey);
      assert.equal(theirs.status, 201, theirs.raw);
      assert.equal((await dbProduct(theirs.body.data.id))!.organization_id, other.organizationId);
    });

    it('replays an idempotent POST: same status, body and Location, meta.replayed, one row @cluster', async () => {
      const idempotencyKey = newIdempotencyKey();
      const body = { ...widget, sku: sku('REPLAY') };
      const first = await call(t.app, 'POST', '/v1/products', { key: org.apiKey, idempotencyKey, body });
      assert.equal(first.status, 201, first.raw);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const again = await call(t.app, 'POST', '/v1/products', { key: org.apiKey, idempotencyKey, body: { ...body } });
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers.location, first.headers.location);
      assert.deepEqual(again.body, { data: first.body.data, meta: { replayed: true } });
      const { db } = testDb();
      const rows = await db.sql`SELECT id FROM products WHERE organization_id = ${org.organizationId} AND sku = ${body.sku}`;
      assert.deepEqual([...rows], [{ id: first.body.data.id }]);
      const conflict = await call(t.app, 'POST', '/v1/products', { key: org.apiKey, idempotencyKey, body: { ...body, name: 'Changed' } });
      assertError(conflict, 409, 'idempotency_conflict');
    });

    it('needs products:write: 403 insufficient_scope, nothing stored', async () => {
      const key = await createTestKey(org, ['products:read']);
      const before = await productCount(org.organizationId);
      const res = await create({ ...widget, sku: sku() }, key);
      assertError(res, 403, 'insufficient_scope', [{ path: '', message: 'required scope: products:write' }]);
      assert.equal(await productCount(org.organizationId), before);
    });
  });

  describe('GET /v1/products/{productId}', () => {
    it('returns the product exactly as created', async () => {
      const created = await create({ ...widget, sku: sku('GET') });
      const res = await call(t.app, 'GET', `/v1/products/${created.body.data.id}`, { key: org.apiKey });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { data: created.body.data, meta: {} });
    });

    it("answers another organisation's product exactly like an unknown id: 404 product_not_found", async () => {
      const theirs = await create({ ...widget, sku: sku('THEIRS') }, other.apiKey);
      const foreign = await call(t.app, 'GET', `/v1/products/${theirs.body.data.id}`, { key: org.apiKey });
      const unknown = await call(t.app, 'GET', '/v1/products/01890a5d-ac96-774b-bcce-b302099a8057', { key: org.apiKey });
      const malformed = await call(t.app, 'GET', '/v1/products/not-a-uuid', { key: org.apiKey });
      for (const res of [foreign, unknown, malformed]) {
        assertError(res, 404, 'product_not_found');
        assert.equal(res.body.error.message, foreign.body.error.message);
      }
    });

    it('needs products:read: 403 insufficient_scope', async () => {
      const created = await create({ ...widget, sku: sku() });
      const key = await createTestKey(org, ['customers:read', 'products:write']);
      const res = await call(t.app, 'GET', `/v1/products/${created.body.data.id}`, { key });
      assertError(res, 403, 'insufficient_scope', [{ path: '', message: 'required scope: products:read' }]);
    });
  });

  describe('PATCH /v1/products/{productId}', () => {
    it('keeps omitted fields, replaces given ones, clears account with null, and bumps updatedAt', async () => {
      const created = await create({ ...widget, sku: sku('PATCH') });
      const id = created.body.data.id as string;
      const res = await patch(id, { name: 'Widget Pro', unitPriceOere: 15000, account: null });
      assert.equal(res.status, 200, res.raw);
      const row = await dbProduct(id);
      assert.deepEqual(res.body, {
        data: {
          ...created.body.data,
          name: 'Widget Pro',
          unitPriceOere: 15000,
          account: null,
          updatedAt: row!.updated_at.toISOString(),
        },
        meta: {},
      });
      const { db } = testDb();
      const [later] = await db.sql<{ later: boolean }[]>`SELECT updated_at > created_at AS later FROM products WHERE id = ${id}`;
      assert.equal(later!.later, true);
      assert.equal(row!.name, 'Widget Pro');
      assert.equal(row!.unit_price_oere, 15000);
      assert.equal(row!.account, null);
      const read = await call(t.app, 'GET', `/v1/products/${id}`, { key: org.apiKey });
      assert.deepEqual(read.body.data, res.body.data);
    });

    it('changes the SKU, including only its case', async () => {
      const created = await create({ ...widget, sku: sku('case') });
      const id = created.body.data.id as string;
      const upper = created.body.data.sku.toUpperCase() as string;
      const res = await patch(id, { sku: upper });
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.data.sku, upper);
      assert.equal((await dbProduct(id))!.sku, upper);
    });

    it("refuses another product's SKU in any case: 409 sku_already_exists, nothing changed", async () => {
      const a = await create({ ...widget, sku: sku('Taken') });
      const b = await create({ ...widget, sku: sku('Mine') });
      const res = await patch(b.body.data.id, { sku: a.body.data.sku.toLowerCase(), name: 'Renamed' });
      assertError(res, 409, 'sku_already_exists', [{ path: '/sku', message: 'is already used by another product' }]);
      const row = await dbProduct(b.body.data.id);
      assert.equal(row!.sku, b.body.data.sku);
      assert.equal(row!.name, 'Widget');
    });

    it('moves a product to a zero rate together with a reason, and back to a rate clearing it', async () => {
      const created = await create({ ...widget, sku: sku('ZERO') });
      const id = created.body.data.id as string;
      const zero = await patch(id, { vatRateBps: 0, vatExemptionReason: 'OMVENDT' });
      assert.equal(zero.status, 200, zero.raw);
      assert.equal(zero.body.data.vatRateBps, 0);
      assert.equal(zero.body.data.vatExemptionReason, 'OMVENDT');
      const reason = await patch(id, { vatExemptionReason: 'EU_VARE' });
      assert.equal(reason.status, 200, reason.raw);
      assert.equal(reason.body.data.vatExemptionReason, 'EU_VARE');
      const back = await patch(id, { vatRateBps: 2500, vatExemptionReason: null });
      assert.equal(back.status, 200, back.raw);
      assert.equal(back.body.data.vatRateBps, 2500);
      assert.equal(back.body.data.vatExemptionReason, null);
      const row = await dbProduct(id);
      assert.equal(row!.vat_rate_bps, 2500);
      assert.equal(row!.vat_exemption_reason, null);
    });

    it('checks the VAT rule on the merged product (422), leaving the row as it was', async () => {
      const taxed = (await create({ ...widget, sku: sku('TAXED') })).body.data;
      const exempt = (await create({ ...widget, sku: sku('EXEMPT'), vatRateBps: 0, vatExemptionReason: 'ML13' })).body.data;
      const required = [{ path: '/vatExemptionReason', message: 'is required when vatRateBps is 0' }];
      const cases: [string, unknown, string, typeof required][] = [
        [taxed.id, { vatRateBps: 0 }, 'vat_exemption_reason_required', required],
        [taxed.id, { vatRateBps: 0, vatExemptionReason: null }, 'vat_exemption_reason_required', required],
        [exempt.id, { vatExemptionReason: null }, 'vat_exemption_reason_required', required],
      ];
      for (const [id, body, code, details] of cases) {
        const res = await patch(id, body);
        assertError(res, 422, code, details);
      }
      for (const p of [taxed, exempt]) {
        const row = await dbProduct(p.id);
        assert.equal(row!.vat_rate_bps, p.vatRateBps);
        assert.equal(row!.vat_exemption_reason, p.vatExemptionReason);
        assert.equal(row!.updated_at.toISOString(), p.updatedAt);
      }
    });

    const invalid: [string, Record<string, unknown>, string, string][] = [
      ['sku null', { sku: null }, '/sku', 'must be string'],
      ['sku empty', { sku: '' }, '/sku', 'must NOT have fewer than 1 characters'],
      ['sku too long', { sku: 'S'.repeat(61) }, '/sku', 'must NOT have more than 60 characters'],
      ['name null', { name: null }, '/name', 'must be string'],
      ['name too long', { name: 'N'.repeat(201) }, '/name', 'must NOT have more than 200 characters'],
      ['unitPriceOere null', { unitPriceOere: null }, '/unitPriceOere', 'must be integer'],
      ['unitPriceOere too large', { unitPriceOere: 100000000001 }, '/unitPriceOere', 'must be <= 100000000000'],
      ['vatRateBps null', { vatRateBps: null }, '/vatRateBps', 'must be integer'],
      ['vatRateBps over 100 %', { vatRateBps: 10001 }, '/vatRateBps', 'must be <= 10000'],
      ['vatExemptionReason unknown', { vatExemptionReason: 'ml13' }, '/vatExemptionReason', 'must be one of: ML13, OMVENDT, EU_VARE, EKSPORT, null'],
      ['account too large', { account: 1000000000 }, '/account', 'must be <= 999999999'],
      ['active null', { active: null }, '/active', 'must be boolean'],
      ['active as text', { active: 'false' }, '/active', 'must be boolean'],
      ['unknown property', { deleted: true }, '/deleted', 'is not an allowed property'],
    ];
    for (const [label, body, path, message] of invalid) {
      it(`refuses ${label}: 400 validation_failed at ${path}`, async () => {
        const created = await create({ ...widget, sku: sku('PBOUND') });
        const res = await patch(created.body.data.id, body);
        assertError(res, 400, 'validation_failed', [{ path, message }]);
        const row = await dbProduct(created.body.data.id);
        assert.equal(row!.updated_at.toISOString(), created.body.data.updatedAt);
      });
    }

    it("answers another organisation's product like an unknown id: 404 product_not_found, nothing changed", async () => {
      const theirs = (await create({ ...widget, sku: sku('THEIRS') }, other.apiKey)).body.data;
      const foreign = await patch(theirs.id, { name: 'Hijacked' });
      const unknown = await patch('01890a5d-ac96-774b-bcce-b302099a8057', { name: 'Hijacked' });
      const malformed = await patch('42', { name: 'Hijacked' });
      for (const res of [foreign, unknown, malformed]) {
        assertError(res, 404, 'product_not_found');
        assert.equal(res.body.error.message, foreign.body.error.message);
      }
      assert.equal((await dbProduct(theirs.id))!.name, 'Widget');
    });

    it('needs products:write: 403 insufficient_scope, nothing changed', async () => {
      const created = await create({ ...widget, sku: sku() });
      const key = await createTestKey(org, ['products:read']);
      const res = await patch(created.body.data.id, { active: false }, key);
      assertError(res, 403, 'insufficient_scope', [{ path: '', message: 'required scope: products:write' }]);
      assert.equal((await dbProduct(created.body.data.id))!.active, true);
    });

    it('has no DELETE: a product stays in the database', async () => {
      const created = await create({ ...widget, sku: sku('KEEP') });
      const res = await call(t.app, 'DELETE', `/v1/products/${created.body.data.id}`, { key: org.apiKey });
      assertError(res, 404, 'route_not_found');
      assert.ok(await dbProduct(created.body.data.id));
    });
  });

  describe('GET /v1/products', () => {
    let listOrg: TestOrg;
    /** Ids of the products in listOrg, oldest first. */
    const ids: string[] = [];
    const list = async (query: string, key = listOrg.apiKey) => call(t.app, 'GET', `/v1/products${query}`, { key });

    before(async () => {
      listOrg = await createTestOrg();
      for (let i = 1; i <= 7; i++) {
        const res = await create({ ...widget, sku: `List-${i}`, name: `Product ${i}` }, listOrg.apiKey);
        assert.equal(res.status, 201, res.raw);
        ids.push(res.body.data.id);
      }
      for (const i of [1, 4]) {
        const res = await patch(ids[i]!, { active: false }, listOrg.apiKey);
        assert.equal(res.status, 200, res.raw);
        assert.equal(res.body.data.active, false);
      }
    });

    it('lists newest first with the full product shape and a null cursor on a single page', async () => {
      const res = await list('');
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.data.map((p: { id: string }) => p.id),
        [...ids].reverse(),
      );
      const single = await call(t.app, 'GET', `/v1/products/${ids[6]}`, { key: listOrg.apiKey });
      assert.deepEqual(res.body.data[0], single.body.data);
      assert.deepEqual(res.body.meta, { nextCursor: null });
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
        seen.push(...res.body.data.map((p: { id: string }) => p.id));
        cursor = res.body.meta.nextCursor;
      } while (cursor !== null);
      assert.deepEqual(sizes, [3, 3, 1]);
      assert.deepEqual(seen, [...ids].reverse());
    });

    it('filters active=false to deactivated products and active=true to the others', async () => {
      const inactive = await list('?active=false');
      assert.equal(inactive.status, 200);
      assert.deepEqual(
        inactive.body.data.map((p: { id: string; active: boolean }) => [p.id, p.active]),
        [[ids[4], false], [ids[1], false]],
      );
      const active = await list('?active=true');
      assert.deepEqual(
        active.body.data.map((p: { id: string }) => p.id),
        [ids[6], ids[5], ids[3], ids[2], ids[0]],
      );
      assert.ok(active.body.data.every((p: { active: boolean }) => p.active));
    });

    it('pages within a filter', async () => {
      const first = await list('?active=true&limit=3');
      assert.deepEqual(first.body.data.map((p: { id: string }) => p.id), [ids[6], ids[5], ids[3]]);
      const second = await list(`?active=true&limit=3&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`);
      assert.deepEqual(second.body.data.map((p: { id: string }) => p.id), [ids[2], ids[0]]);
      assert.equal(second.body.meta.nextCursor, null);
    });

    it('filters sku exactly, without regard to case', async () => {
      for (const q of ['LIST-3', 'list-3', 'List-3']) {
        const res = await list(`?sku=${q}`);
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.data.map((p: { id: string }) => p.id), [ids[2]]);
        assert.deepEqual(res.body.meta, { nextCursor: null });
      }
      const partial = await list('?sku=List');
      assert.deepEqual(partial.body, { data: [], meta: { nextCursor: null } });
      const combined = await list('?sku=list-2&active=true');
      assert.deepEqual(combined.body, { data: [], meta: { nextCursor: null } });
    });

    it('never lists another organisation\'s products', async () => {
      const res = await call(t.app, 'GET', '/v1/products?sku=List-1', { key: other.apiKey });
      assert.deepEqual(res.body, { data: [], meta: { nextCursor: null } });
    });

    it('refuses a cursor issued for another filter, list or organisation: 400 invalid_cursor', async () => {
      const unfiltered = (await list('?limit=3')).body.meta.nextCursor as string;
      const activeOnly = (await list('?active=true&limit=3')).body.meta.nextCursor as string;
      const attempts: [string, string][] = [
        [`?active=true&limit=3&cursor=${encodeURIComponent(unfiltered)}`, listOrg.apiKey],
        [`?active=false&limit=3&cursor=${encodeURIComponent(activeOnly)}`, listOrg.apiKey],
        [`?limit=3&cursor=${encodeURIComponent(activeOnly)}`, listOrg.apiKey],
        [`?sku=List-1&cursor=${encodeURIComponent(unfiltered)}`, listOrg.apiKey],
        [`?limit=3&cursor=${encodeURIComponent(unfiltered)}`, other.apiKey],
        ['?cursor=not-a-cursor', listOrg.apiKey],
      ];
      for (const [query, key] of attempts) {
        assertError(await list(query, key), 400, 'invalid_cursor');
      }
      const accounts = await call(t.app, 'GET', `/v1/accounts?cursor=${encodeURIComponent(unfiltered)}`, { key: listOrg.apiKey });
      assertError(accounts, 400, 'invalid_cursor');
    });

    it('validates the query: 400 validation_failed', async () => {
      const cases: [string, string, string][] = [
        ['?active=maybe', '/active', 'querystring must be boolean'],
        ['?limit=0', '/limit', 'querystring must be >= 1'],
        ['?limit=201', '/limit', 'querystring must be <= 200'],
        [`?sku=${'s'.repeat(61)}`, '/sku', 'querystring must NOT have more than 60 characters'],
        ['?name=x', '/name', 'querystring is not an allowed property'],
      ];
      for (const [query, path, message] of cases) {
        assertError(await list(query), 400, 'validation_failed', [{ path, message }]);
      }
    });

    it('needs products:read: 403 insufficient_scope', async () => {
      const key = await createTestKey(listOrg, ['products:write']);
      assertError(await list('', key), 403, 'insufficient_scope', [{ path: '', message: 'required scope: products:read' }]);
    });
  });
});
