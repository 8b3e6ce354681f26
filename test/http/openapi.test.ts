import assert from 'node:assert/strict';
import { call, startTestApp, type TestApp } from '../helpers/context.ts';

describe('OpenAPI document and docs page', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('serves an OpenAPI 3.1 document without a key', async () => {
    const res = await call(t.app, 'GET', '/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    assert.equal(res.body.info.version, '1.0.0');
    assert.deepEqual(res.body.components.securitySchemes.bearerAuth, {
      type: 'http', scheme: 'bearer', description: 'API key: sk_live_… or sk_test_…',
    });
    // Spec 5.1: bearer authentication is the document's default; the open operations opt out.
    assert.deepEqual(res.body.security, [{ bearerAuth: [] }]);
    for (const [path, ops] of Object.entries(res.body.paths as Record<string, Record<string, { security?: unknown[] }>>)) {
      for (const [method, op] of Object.entries(ops)) assert.ok(Array.isArray(op.security), `${method} ${path} states its security`);
    }
    // A request the spec describes as "none" documents no body; an all-optional body is not required.
    const paths = res.body.paths as Record<string, Record<string, { requestBody?: { required?: boolean }; parameters?: { in: string }[] }>>;
    assert.equal(paths['/v1/invoices/{invoiceId}/send']!.post!.requestBody, undefined);
    assert.equal(paths['/v1/webhook-endpoints/{endpointId}/rotate-secret']!.post!.requestBody, undefined);
    assert.equal((paths['/v1/invoices/{invoiceId}']!.get!.parameters ?? []).filter((p) => p.in === 'query').length, 0);
    assert.equal(paths['/v1/customers/{customerId}']!.patch!.requestBody!.required, false);
    assert.equal(paths['/v1/customers']!.post!.requestBody!.required, true);
  });

  it('lists every authenticated route with its scope, schemas and error responses', async () => {
    const doc = (await call(t.app, 'GET', '/v1/openapi.json')).body;
    assert.ok(t.app.scopedRoutes.length >= 10);
    for (const route of t.app.scopedRoutes) {
      const path = route.url.replace(/:(\w+)/g, '{$1}').replace(/\/$/, '') || '/';
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${path} missing from the document`);
      assert.deepEqual(op.security, [{ bearerAuth: [route.scope] }], path);
      assert.equal(op['x-required-scope'], route.scope);
      for (const code of ['400', '401', '403', '429', '500']) assert.ok(op.responses[code], `${route.method} ${path} lacks ${code}`);
      const success = Object.keys(op.responses).filter((c) => c.startsWith('2'));
      assert.equal(success.length, 1, `${route.method} ${path} documents one success response`);
      if (route.method !== 'GET') {
        assert.ok(op.responses['409'], `${route.method} ${path} lacks 409`);
        const idem = op.parameters.find((p: { name: string; in: string }) => p.in === 'header' && p.name === 'idempotency-key');
        assert.ok(idem?.required, `${route.method} ${path} lacks the Idempotency-Key header`);
      }
    }
    const create = doc.paths['/v1/customers'].post;
    assert.equal(create.requestBody.content['application/json'].schema.additionalProperties, false);
    assert.deepEqual(create.requestBody.content['application/json'].schema.required, ['type', 'name']);
  });

  it('serves the interactive docs page', async () => {
    const res = await call(t.app, 'GET', '/docs/');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.raw, /swagger/i);
    const json = await call(t.app, 'GET', '/docs/json');
    assert.equal(json.status, 200);
    assert.equal(json.body.openapi, '3.1.0');
  });
});
