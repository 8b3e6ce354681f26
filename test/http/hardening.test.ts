import assert from 'node:assert/strict';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { call, createTestOrg, startTestApp, type TestApp, type TestOrg } from '../helpers/context.ts';

/** Inputs that used to slip past the envelope or reach PostgreSQL raw: every one answers with the error envelope. */
describe('hardening: odd input still gets the envelope', () => {
  let t: TestApp;
  let org: TestOrg;
  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
  });
  after(() => t.close());

  it('refuses U+0000 in body strings, object keys and query values with 400 validation_failed @cluster', async () => {
    for (const [method, url, body, path] of [
      ['POST', '/v1/customers', { type: 'person', name: 'A\u0000B' }, '/name'],
      ['POST', '/v1/customers', { type: 'person', name: 'A', metadata: { k: 'v\u0000' } }, '/metadata/k'],
      ['POST', '/v1/customers', { type: 'person', name: 'A', metadata: { 'k\u0000': 'v' } }, '/metadata/k\u0000'],
      ['GET', '/v1/customers?externalReference=%00', undefined, '/externalReference'],
      ['GET', '/v1/products?sku=a%00', undefined, '/sku'],
    ] as const) {
      const res = await call(t.app, method, url, { key: org.apiKey, body });
      assert.equal(res.status, 400, `${method} ${url}`);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.deepEqual(res.body.error.details, [{ path, message: 'must not contain U+0000' }]);
    }
  });

  it('answers a path that cannot be decoded with 404 route_not_found and a Request-Id @cluster', async () => {
    const res = await call(t.app, 'GET', '/v1/customers/%zz', { key: org.apiKey });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'route_not_found');
    assert.equal(res.body.error.requestId, res.headers['request-id']);
  });

  it('answers a very long path id with the resource’s own 404', async () => {
    const res = await call(t.app, 'GET', `/v1/customers/${'x'.repeat(500)}`, { key: org.apiKey });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'customer_not_found');
  });

  it('reports the useful half of a nullable field’s error and escapes JSON Pointer tokens', async () => {
    const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'A', email: 5, 'a/b~c': 1 } });
    assert.equal(res.status, 400);
    const details = res.body.error.details as { path: string; message: string }[];
    assert.deepEqual(details.find((d) => d.path === '/email'), { path: '/email', message: 'must be string' });
    assert.ok(details.some((d) => d.path === '/a~1b~0c'), JSON.stringify(details));
  });

  describe('on a real socket', () => {
    let port: number;
    before(async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
    });

    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
        let data = '';
        socket.on('data', (d) => (data += d.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });

    it('answers a malformed request line with a 400 envelope', async () => {
      const res = await raw('GARBAGE\r\n\r\n');
      assert.match(res, /^HTTP\/1\.1 400 /);
      assert.match(res, /Request-Id: req_/);
      const body = JSON.parse(res.slice(res.indexOf('\r\n\r\n') + 4));
      assert.equal(body.error.code, 'invalid_request');
    });

    it('answers oversized headers with a 431 envelope @cluster', async () => {
      const res = await raw(`GET /v1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      assert.match(res, /^HTTP\/1\.1 431 /);
      const body = JSON.parse(res.slice(res.indexOf('\r\n\r\n') + 4));
      assert.equal(body.error.code, 'headers_too_large');
    });
  });
});
