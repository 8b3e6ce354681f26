import assert from 'node:assert/strict';
import { SCOPES } from '../../contracts/scopes.ts';
import { call, createTestKey, createTestOrg, startTestApp, type TestApp, type TestOrg } from '../helpers/context.ts';

describe('GET /v1 @cluster', () => {
  let t: TestApp;
  let org: TestOrg;
  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
  });
  after(() => t.close());

  it('reports the API version, the organisation and every scope of a full key', async () => {
    const res = await call(t.app, 'GET', '/v1', { key: org.apiKey });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      data: { apiVersion: 'v1', descriptionVersion: '1.0.0', organizationId: org.organizationId, scopes: [...SCOPES] },
      meta: {},
    });
    assert.match(String(res.headers['request-id']), /^req_/);
  });

  it('reports only the scopes a limited key holds', async () => {
    const key = await createTestKey(org, ['customers:read', 'api:discovery']);
    const res = await call(t.app, 'GET', '/v1', { key });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data.scopes, ['api:discovery', 'customers:read']);
  });
});
