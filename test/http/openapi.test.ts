import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { call, startTestApp, type TestApp } from '../helpers/context.ts';
import { OPERATION_IDS } from '../../services/api/openapi.ts';
import { openApiDocument } from '../../services/api/openapi-document.ts';
import { CLIENT_DIR, generateClientFiles } from '../../clients/typescript/generate.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Every operation of a document with its method and path. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function operations(doc: any): { method: string; path: string; op: any }[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => METHODS.includes(method)).map(([method, op]) => ({ method, path, op })),
  );
}

/** Every `$ref` anywhere in a value. */
function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refsIn(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

describe('OpenAPI document and docs page', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('serves an OpenAPI 3.1 document without a key @cluster', async () => {
    const res = await call(t.app, 'GET', '/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    assert.equal(res.body.info.version, '1.0.0');
    assert.deepEqual(res.body.components.securitySchemes.bearerAuth, {
      type: 'http', scheme: 'bearer', description: 'API key: sk_live_… or sk_test_…',
    });
    // Bearer authentication is the document's default; the open operations opt out.
    assert.deepEqual(res.body.security, [{ bearerAuth: [] }]);
    for (const [path, ops] of Object.entries(res.body.paths as Record<string, Record<string, { security?: unknown[] }>>)) {
      for (const [method, op] of Object.entries(ops)) assert.ok(Array.isArray(op.security), `${method} ${path} states its security`);
    }
    // A request that takes no body documents none; an all-optional body is not required.
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

  it('gives every operation a unique camelCase operationId from the table in openapi.ts', async () => {
    const doc = (await call(t.app, 'GET', '/v1/openapi.json')).body;
    const ids: string[] = [];
    for (const { method, path, op } of operations(doc)) {
      assert.equal(typeof op.operationId, 'string', `${method.toUpperCase()} ${path} has no operationId (add it to OPERATION_IDS)`);
      assert.match(op.operationId, /^[a-z][a-zA-Z0-9]*$/, `${method.toUpperCase()} ${path}`);
      ids.push(op.operationId);
    }
    assert.equal(new Set(ids).size, ids.length, `repeated operationIds: ${ids.filter((id, i) => ids.indexOf(id) !== i).join(', ')}`);
    // No entry of the table names a route that no longer exists.
    assert.deepEqual([...ids].sort(), Object.values(OPERATION_IDS).sort());
    assert.equal(doc.paths['/v1/invoices'].get.operationId, 'listInvoices');
    assert.equal(doc.paths['/v1/invoices/{invoiceId}/issue'].post.operationId, 'issueInvoice');
    assert.equal(doc.paths['/v1/customers/{customerId}'].get.operationId, 'getCustomer');
  });

  it('holds each shared schema once under components.schemas, referred to with $ref', async () => {
    const doc = (await call(t.app, 'GET', '/v1/openapi.json')).body;
    const schemas = doc.components.schemas as Record<string, { title?: string }>;
    for (const name of ['Invoice', 'InvoiceLine', 'Customer', 'Address', 'Product', 'Account', 'Payment', 'PaymentLink', 'Event', 'WebhookEndpoint', 'Error']) {
      assert.ok(schemas[name], `components.schemas.${name}`);
    }
    assert.equal(schemas.Error!.title, 'Error');
    // Every reference resolves, and every component is referred to.
    const refs = refsIn(doc);
    for (const ref of refs) assert.ok(schemas[ref.replace('#/components/schemas/', '')] && ref.startsWith('#/components/schemas/'), ref);
    assert.deepEqual([...new Set(refs)].map((r) => r.split('/').pop()).sort(), Object.keys(schemas).sort());
    // Named schemas are not written out again in the operations (a request body's own schema stays in place).
    const inline: string[] = [];
    const walk = (v: unknown, at: string, top: boolean) => {
      if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}/${i}`, false));
      if (!v || typeof v !== 'object') return;
      const o = v as Record<string, unknown>;
      if (typeof o.title === 'string' && !top) inline.push(at);
      for (const [k, x] of Object.entries(o)) if (!['enum', 'const', 'default', 'example', 'examples'].includes(k)) walk(x, `${at}/${k}`, false);
    };
    for (const { method, path, op } of operations(doc)) {
      const { requestBody, ...rest } = op;
      walk(rest, `${method} ${path}`, false);
      // A request body is JSON, or (a bank statement) XML.
      for (const [type, content] of Object.entries((requestBody?.content ?? {}) as Record<string, { schema: unknown }>)) walk(content.schema, `${method} ${path} body ${type}`, true);
    }
    assert.deepEqual(inline, []);
    const get = doc.paths['/v1/invoices/{invoiceId}'].get;
    assert.deepEqual(get.responses['200'].content['application/json'].schema.properties.data, { $ref: '#/components/schemas/Invoice' });
    assert.deepEqual(get.responses['404'], {
      description: 'Not found: the id is unknown or belongs to another organisation',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    });
    const list = doc.paths['/v1/payments'].get.responses['200'].content['application/json'].schema;
    assert.deepEqual(list.properties.data, { type: 'array', items: { $ref: '#/components/schemas/Payment' } });
  });

  it('names its server: PUBLIC_API_URL when set, else the origin the document is fetched from', async () => {
    const doc = (await call(t.app, 'GET', '/v1/openapi.json')).body;
    assert.deepEqual(doc.servers, [{ url: '/', description: 'This API, at the origin this document was fetched from' }]);
    const pub = await openApiDocument({ publicApiUrl: 'https://api.example.dk/' });
    assert.deepEqual(pub.servers, [{ url: 'https://api.example.dk', description: 'This API' }]);
    // Built without a database, the document is the one the API serves.
    assert.deepEqual(await openApiDocument(), doc);
  });

  it('passes an OpenAPI 3.1 validator, which refuses a broken copy', async () => {
    const doc = (await call(t.app, 'GET', '/v1/openapi.json')).body;
    const result = await validate(structuredClone(doc));
    assert.ok(result.valid, result.valid ? '' : compileErrors(result));
    assert.deepEqual(result.warnings, []);
    // The controls: the same validator refuses a repeated operationId, a reference to nothing and a server without a URL.
    const breaks: [string, (d: typeof doc) => void, RegExp][] = [
      ['repeated operationId', (d) => (d.paths['/v1/invoices'].post.operationId = 'listInvoices'), /operationId `listInvoices` is duplicated/],
      [
        'dangling $ref',
        (d) => (d.paths['/v1/payments/{paymentId}'].get.responses['200'].content['application/json'].schema.properties.data = { $ref: '#/components/schemas/Nothing' }),
        /Missing \$ref pointer "#\/components\/schemas\/Nothing"/,
      ],
      ['server without url', (d) => (d.servers = [{ description: 'somewhere' }]), /must have required property 'url'/],
    ];
    for (const [what, breakIt, message] of breaks) {
      const broken = structuredClone(doc);
      breakIt(broken);
      const refused = await validate(broken);
      assert.equal(refused.valid, false, what);
      assert.match(refused.valid ? '' : compileErrors(refused), message, what);
    }
  });

  it('has the committed client (clients/typescript) generated from the document as it is now', async function () {
    this.timeout(60_000);
    const files = await generateClientFiles();
    for (const [name, content] of Object.entries(files)) {
      const committed = readFileSync(join(CLIENT_DIR, name), 'utf8');
      if (committed === content) continue;
      const [was, now] = [committed.split('\n'), content.split('\n')];
      const line = was.findIndex((l, i) => l !== now[i]);
      assert.fail(
        `clients/typescript/${name} is stale: run npm run openapi and commit the result. First difference, line ${line + 1}:\n` +
          `  committed: ${was[line]?.trim()}\n  now:       ${now[line]?.trim()}`,
      );
    }
  });

  it('refuses to build a document in which two different schemas carry the same title', async () => {
    const clash = await startTestApp({
      extraRoutes: (app) =>
        app.get('/v1/clash', { config: { scope: 'customers:read' }, schema: { response: { 200: { type: 'object', title: 'Customer', properties: {} } } } }, async () => ({})),
    });
    try {
      assert.throws(() => clash.app.swagger(), /two different schemas are named Customer/);
    } finally {
      await clash.close();
    }
  });

  it('serves the interactive docs page @cluster', async () => {
    const res = await call(t.app, 'GET', '/docs/');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.raw, /swagger/i);
    const json = await call(t.app, 'GET', '/docs/json');
    assert.equal(json.status, 200);
    assert.equal(json.body.openapi, '3.1.0');
  });
});
