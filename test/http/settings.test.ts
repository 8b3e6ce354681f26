import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp } from '../helpers/context.ts';

describe('GET /v1/settings', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('shows a new organisation: standard, unverified, 14 days, every address and bank key (null where unset)', async () => {
    const org = await createTestOrg({ name: 'Ny ApS', cvr: undefined, street: undefined, postalCode: undefined, city: undefined, sandbox: false });
    const res = await call(t.app, 'GET', '/v1/settings', { key: org.apiKey });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, {
      data: {
        organizationId: org.organizationId, name: 'Ny ApS', cvr: null,
        address: { street: null, postalCode: null, city: null, country: null },
        email: null, bank: { reg: null, account: null }, fiCreditorNumber: null, sandbox: false, plan: 'standard', defaultPaymentTermsDays: 14,
        pastDue: { minOere: 10_000, minDays: 14 }, verification: 'unverified',
      },
      meta: {},
    });
  });

  it('shows what the operator set: seller details, plan, thresholds and verification @cluster', async () => {
    const org = await createTestOrg({ name: 'Fuld ApS', email: 'faktura@fuld.dk', bankReg: '1234', bankAccount: '0012345678', fiCreditorNumber: '85799665', plan: 'pro' });
    await testDb().db.sql`UPDATE organizations SET past_due_amount_oere = 5000, past_due_days = 7, verification = 'verified' WHERE id = ${org.organizationId}`;
    const res = await call(t.app, 'GET', '/v1/settings', { key: org.apiKey });
    assert.deepEqual(res.body.data, {
      organizationId: org.organizationId, name: 'Fuld ApS', cvr: '12345678',
      address: { street: 'Testvej 1', postalCode: '8000', city: 'Aarhus C', country: 'DK' },
      email: 'faktura@fuld.dk', bank: { reg: '1234', account: '0012345678' }, fiCreditorNumber: '85799665', sandbox: true, plan: 'pro', defaultPaymentTermsDays: 14,
      pastDue: { minOere: 5000, minDays: 7 }, verification: 'verified',
    });
  });

  it('needs settings:read and takes no query parameters', async () => {
    const org = await createTestOrg();
    assert.equal((await call(t.app, 'GET', '/v1/settings', { key: await createTestKey(org, ['customers:read']) })).status, 403);
    assert.equal((await call(t.app, 'GET', '/v1/settings?x=1', { key: org.apiKey })).status, 400);
    assert.equal((await call(t.app, 'GET', '/v1/settings')).status, 401);
  });
});
