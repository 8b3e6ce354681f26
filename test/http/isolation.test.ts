import assert from 'node:assert/strict';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/**
 * Tenant isolation on every route: another organisation's id answers exactly like an unknown id
 * (docs/api-conventions.md, "Requests", Ids), lists and filters never show another organisation's rows, and nothing of
 * theirs changes.
 */
describe('two-organisation isolation', () => {
  let t: TestApp;
  let a: TestOrg;
  let b: TestOrg;
  const unknown = '0190a8a0-0000-7000-8000-00000000ffff';
  let bCustomer: { id: string; updatedAt: string };
  let bDepartment: { id: string };
  let bProduct: { id: string; updatedAt: string };
  let aCustomer: { id: string };

  before(async () => {
    t = await startTestApp();
    a = await createTestOrg();
    b = await createTestOrg();
    bCustomer = (await call(t.app, 'POST', '/v1/customers', {
      key: b.apiKey,
      body: { type: 'company', name: 'B Customer', cvr: '99999999', email: 'b@b.dk', externalReference: 'shared-ref' },
    })).body.data;
    bDepartment = (await call(t.app, 'POST', `/v1/customers/${bCustomer.id}/departments`, { key: b.apiKey, body: { name: 'B Dept' } })).body.data;
    bProduct = (await call(t.app, 'POST', '/v1/products', {
      key: b.apiKey,
      body: { sku: 'SHARED-SKU', name: 'B Product', unitPriceOere: 100, vatRateBps: 2500 },
    })).body.data;
    assert.equal((await call(t.app, 'POST', '/v1/accounts', { key: b.apiKey, body: { accountNumber: '1000', name: 'B Sales' } })).status, 201);
    aCustomer = (await call(t.app, 'POST', '/v1/customers', { key: a.apiKey, body: { type: 'person', name: 'A Customer' } })).body.data;
  });
  after(() => t.close());

  const sameAsUnknown = async (method: string, foreignUrl: string, unknownUrl: string, body?: unknown) => {
    const foreign = await call(t.app, method, foreignUrl, { key: a.apiKey, body });
    const missing = await call(t.app, method, unknownUrl, { key: a.apiKey, body });
    assert.equal(foreign.status, 404, `${method} ${foreignUrl}`);
    assert.equal(missing.status, 404, `${method} ${unknownUrl}`);
    const strip = (e: { error: { requestId: string } }) => ({ ...e.error, requestId: undefined });
    assert.deepEqual(strip(foreign.body), strip(missing.body), `${method} ${foreignUrl}`);
    return foreign.body.error.code as string;
  };

  it('customers: read and update answer customer_not_found', async () => {
    assert.equal(await sameAsUnknown('GET', `/v1/customers/${bCustomer.id}`, `/v1/customers/${unknown}`), 'customer_not_found');
    assert.equal(await sameAsUnknown('PATCH', `/v1/customers/${bCustomer.id}`, `/v1/customers/${unknown}`, { name: 'Hijack' }), 'customer_not_found');
  });

  it('departments: list, create and delete under a foreign customer answer customer_not_found', async () => {
    assert.equal(await sameAsUnknown('GET', `/v1/customers/${bCustomer.id}/departments`, `/v1/customers/${unknown}/departments`), 'customer_not_found');
    assert.equal(
      await sameAsUnknown('POST', `/v1/customers/${bCustomer.id}/departments`, `/v1/customers/${unknown}/departments`, { name: 'x' }),
      'customer_not_found',
    );
    assert.equal(
      await sameAsUnknown('DELETE', `/v1/customers/${bCustomer.id}/departments/${bDepartment.id}`, `/v1/customers/${unknown}/departments/${unknown}`),
      'customer_not_found',
    );
    // Own customer, foreign department id.
    assert.equal(
      await sameAsUnknown('DELETE', `/v1/customers/${aCustomer.id}/departments/${bDepartment.id}`, `/v1/customers/${aCustomer.id}/departments/${unknown}`),
      'department_not_found',
    );
  });

  it('products: read and update answer product_not_found', async () => {
    assert.equal(await sameAsUnknown('GET', `/v1/products/${bProduct.id}`, `/v1/products/${unknown}`), 'product_not_found');
    assert.equal(await sameAsUnknown('PATCH', `/v1/products/${bProduct.id}`, `/v1/products/${unknown}`, { name: 'Hijack' }), 'product_not_found');
  });

  it('lists and exact filters never show another organisation’s rows @cluster', async () => {
    const ids = async (url: string) => (await call(t.app, 'GET', url, { key: a.apiKey })).body.data.map((r: { id: string }) => r.id);
    assert.deepEqual(await ids('/v1/customers'), [aCustomer.id]);
    assert.deepEqual(await ids('/v1/customers?externalReference=shared-ref'), []);
    assert.deepEqual(await ids('/v1/customers?cvr=99999999'), []);
    assert.deepEqual(await ids('/v1/customers?email=b%40b.dk'), []);
    assert.deepEqual(await ids('/v1/products'), []);
    assert.deepEqual(await ids('/v1/products?sku=SHARED-SKU'), []);
    assert.deepEqual(await ids('/v1/accounts'), []);
    // The same SKU and account number are free in another organisation.
    assert.equal((await call(t.app, 'POST', '/v1/products', { key: a.apiKey, body: { sku: 'shared-sku', name: 'A', unitPriceOere: 1, vatRateBps: 2500 } })).status, 201);
    assert.equal((await call(t.app, 'POST', '/v1/accounts', { key: a.apiKey, body: { accountNumber: '1000', name: 'A Sales' } })).status, 201);
  });

  it('nothing of the other organisation changed', async () => {
    const { sql } = testDb().db;
    const [c] = await sql`SELECT name, updated_at FROM customers WHERE id = ${bCustomer.id}`;
    assert.equal(c!.name, 'B Customer');
    assert.equal(c!.updated_at.toISOString(), bCustomer.updatedAt);
    const [d] = await sql`SELECT deleted_at FROM departments WHERE id = ${bDepartment.id}`;
    assert.equal(d!.deleted_at, null);
    const [p] = await sql`SELECT name, updated_at FROM products WHERE id = ${bProduct.id}`;
    assert.equal(p!.name, 'B Product');
    assert.equal(p!.updated_at.toISOString(), bProduct.updatedAt);
  });
});
