import assert from 'node:assert/strict';
import { call, createTestOrg, startTestApp, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';
import { redactPath, redactRequestUrl, RouteWords } from '../../services/shared/log-redaction.ts';

/** The request line each service logs: ids and fixed route words stay, codes, tokens and e-mail addresses do not. */
describe('request logs', () => {
  let api: TestApp;
  let pay: TestPay;
  let org: TestOrg;
  const UUID = '0190a8a0-0000-7000-8000-000000000001';

  before(async () => {
    api = await startTestApp();
    pay = await startTestPay();
    org = await createTestOrg();
  });
  after(async () => {
    await pay?.close();
    await api?.close();
  });

  /** The `url` of the log line written for the request with this id. */
  const loggedUrl = (logs: string, requestId: string): string => {
    const line = logs.split('\n').find((l) => l.includes('"request completed"') && l.includes(`"reqId":"${requestId}"`));
    assert.ok(line, `no log line for ${requestId}`);
    return (JSON.parse(line) as { req: { url: string } }).req.url;
  };
  const payGet = async (url: string) => {
    const res = await pay.app.inject({ method: 'GET', url });
    return { status: res.statusCode, url: loggedUrl(pay.logs(), String(res.headers['request-id'])) };
  };
  const apiGet = async (url: string) => {
    const res = await call(api.app, 'GET', url, { key: org.apiKey });
    return { status: res.status, url: loggedUrl(api.logs(), String(res.headers['request-id'])) };
  };

  it('the pay service shows no payment code, reference or e-mail, in the path or the query', async () => {
    const code = await payGet('/pay/ABCD-EFGH');
    assert.equal(code.status, 404);
    assert.equal(code.url, '/[redacted]/[redacted]');
    const query = await payGet('/?code=ABCD-EFGH&email=kunde%40example.dk&lang=da');
    assert.equal(query.url, '/?code=[redacted]&email=[redacted]&lang=da');
    const reference = await payGet(`/p/${'ab'.repeat(16)}?lang=en`);
    assert.equal(reference.url, '/p/[reference]?lang=en');
    const returned = await payGet(`/p/${'cd'.repeat(16)}/return?session=s3cr3t`);
    assert.equal(returned.url, '/p/[reference]/return?session=[session]');
    const token = await payGet('/test-provider/checkout/eyJ.abc?declined=1');
    assert.equal(token.url, '/test-provider/checkout/[token]?declined=1');
    const callback = await pay.app.inject({ method: 'POST', url: '/callbacks/kunde@example.dk', payload: {} });
    assert.equal(loggedUrl(pay.logs(), String(callback.headers['request-id'])), '/callbacks/[provider]');
    const mail = await payGet('/p/kunde@example.dk/nothing-here');
    assert.equal(mail.url, '/p/[redacted]/[redacted]');
    const logs = pay.logs();
    for (const secret of ['ABCD-EFGH', 'kunde', 'example.dk', 'abab', 'cdcd', 's3cr3t', 'eyJ']) assert.ok(!logs.includes(secret), `the pay log shows ${secret}`);
  });

  it('the API keeps ids and route words and masks other path segments, matched or not @cluster', async () => {
    const byId = await apiGet(`/v1/customers/${UUID}`);
    assert.equal(byId.status, 404);
    assert.equal(byId.url, `/v1/customers/${UUID}`);
    const email = await apiGet('/v1/customers/kunde@example.dk');
    assert.equal(email.status, 404);
    assert.equal(email.url, '/v1/customers/[customerId]');
    const unmatched = await apiGet('/v1/kunder/kunde@example.dk/balance?limit=5&email=kunde%40example.dk');
    assert.equal(unmatched.status, 404);
    assert.equal(unmatched.url, '/v1/[redacted]/[redacted]/balance?limit=5&email=[redacted]');
    // The pixel route itself logs only warnings; a token path it does not match is logged like any 404.
    const pixel = await api.app.inject({ method: 'GET', url: '/t/o/c2VjcmV0dG9rZW4/x.gif' });
    assert.equal(pixel.statusCode, 404);
    assert.equal(loggedUrl(api.logs(), String(pixel.headers['request-id'])), '/t/o/[redacted]/[redacted]');
    const logs = api.logs();
    for (const secret of ['kunde', 'example.dk', 'c2VjcmV0dG9rZW4']) assert.ok(!logs.includes(secret), `the API log shows ${secret}`);
  });

  it('the shared masking: route parameters by name unless UUIDs, unknown segments without a route, query values', () => {
    const words = new RouteWords();
    words.add('/v1/invoices/:invoiceId/pdf');
    assert.equal(redactPath(`/v1/invoices/${UUID}/pdf`, { route: '/v1/invoices/:invoiceId/pdf', words }), `/v1/invoices/${UUID}/pdf`);
    assert.equal(redactPath('/v1/invoices/x@y.dk/pdf/', { route: '/v1/invoices/:invoiceId/pdf', words }), '/v1/invoices/[invoiceId]/pdf/');
    assert.equal(redactPath('/v1/invoice/x@y.dk', { words }), '/v1/[redacted]/[redacted]');
    // A parameter whose value is one of the service's fixed words (a provider's name) is shown.
    assert.equal(redactPath('/v1/invoices/pdf/pdf', { route: '/v1/invoices/:invoiceId/pdf', words }), '/v1/invoices/pdf/pdf');
    assert.equal(redactPath(`/V1/${UUID.toUpperCase()}/pdf`, { words }), `/[redacted]/${UUID.toUpperCase()}/pdf`);
    assert.equal(redactRequestUrl('/a?limit=5&code=X&code=Y', { keep: new Set(['limit']) }), '/a?limit=5&code=[redacted]&code=[redacted]');
    assert.equal(redactRequestUrl('/a?session=abc', { keep: new Set(), maskedAs: { session: '[session]' } }), '/a?session=[session]');
  });
});
