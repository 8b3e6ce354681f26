import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { call, createTestOrg, startTestApp, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/**
 * The organisation's light logo on the hosted pay page (docs/api-conventions.md, "Branding"): the invoice page shows it
 * beside the creditor's name, linked under the link's own path by the image's hash and served by the pay service, so
 * the page's Content-Security-Policy stays `img-src 'self'`.
 */
describe('branding on the pay page', () => {
  let api: TestApp;
  let pay: TestPay;
  let logo: Buffer;

  before(async () => {
    api = await startTestApp({ payBaseUrl: 'http://pay.test' });
    pay = await startTestPay();
    logo = await sharp({ create: { width: 240, height: 80, channels: 3, background: { r: 10, g: 80, b: 160 } } }).png().toBuffer();
  });
  after(async () => {
    await pay?.close();
    await api?.close();
  });

  async function linkedInvoice(org: TestOrg): Promise<string> {
    const c = await call(api.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } });
    const line = { description: 'Kagebord', quantity: 1, unitPriceOere: 50_000, vatRateBps: 0, vatExemptionReason: 'ML13' };
    const inv = await call(api.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId: c.body.data.id, dueDate: '2031-03-14', lines: [line] } });
    assert.equal(inv.status, 201, inv.raw);
    const link = await call(api.app, 'POST', `/v1/invoices/${inv.body.data.id}/payment-link`, { key: org.apiKey });
    return link.body.data.reference as string;
  }
  const get = (url: string) => pay.app.inject({ method: 'GET', url });
  const upload = async (org: TestOrg, image: Buffer, mime: string, variant = 'light') => {
    const res = await call(api.app, 'PUT', '/v1/branding/logo', { key: org.apiKey, body: { data: image.toString('base64'), mime, variant } });
    assert.equal(res.status, 200, res.raw);
  };
  const logoTags = (html: string) => [...html.matchAll(/<img class="brand-logo" src="([^"]+)"[^>]*>/g)].map((m) => m[1]);

  it('shows the light logo on the invoice page and serves it from the pay service; the policy stays img-src self', async () => {
    const org = await createTestOrg({ name: 'Bager Hansen ApS' });
    const reference = await linkedInvoice(org);
    const without = await get(`/p/${reference}`);
    assert.equal(without.statusCode, 200);
    assert.deepEqual(logoTags(without.body), []);

    await upload(org, logo, 'image/png');
    // The dark logo is not the pay page's.
    await upload(org, await sharp({ create: { width: 20, height: 20, channels: 3, background: '#000' } }).png().toBuffer(), 'image/png', 'dark');
    const page = await get(`/p/${reference}`);
    assert.equal(page.statusCode, 200);
    assert.deepEqual(logoTags(page.body), [`/p/${reference}/logo/${sha256(logo)}`]);
    assert.match(page.body, /<p class="brand">Bager Hansen ApS<\/p>/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /img-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /data:/);

    const image = await get(logoTags(page.body)[0]!);
    assert.equal(image.statusCode, 200);
    assert.equal(image.headers['content-type'], 'image/png');
    assert.ok(image.rawPayload.equals(logo));
    assert.equal(image.headers['x-content-type-options'], 'nosniff');
    assert.equal(image.headers['referrer-policy'], 'no-referrer');
    assert.match(String(image.headers['content-security-policy']), /sandbox/);
    // The reference is a capability: the logs name the route's parameters, never the reference.
    assert.ok(!pay.logs().includes(reference), 'the reference is in the logs');
  });

  it('serves only the current light logo, only under a link of its own organisation @cluster', async () => {
    const org = await createTestOrg();
    const stranger = await createTestOrg();
    const reference = await linkedInvoice(org);
    const strangersReference = await linkedInvoice(stranger);
    await upload(org, logo, 'image/png');
    assert.equal((await get(`/p/${reference}/logo/${sha256(logo)}`)).statusCode, 200);
    // Another organisation's link does not reach this organisation's image.
    assert.equal((await get(`/p/${strangersReference}/logo/${sha256(logo)}`)).statusCode, 404);
    assert.equal((await get(`/p/${'0'.repeat(32)}/logo/${sha256(logo)}`)).statusCode, 404);
    assert.equal((await get(`/p/${reference}/logo/not-a-hash`)).statusCode, 404);

    // A new logo replaces the old one on the page; the old address is gone.
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 90 30"><rect width="90" height="30" fill="#0a5"/></svg>');
    await upload(org, svg, 'image/svg+xml');
    const branding = (await call(api.app, 'GET', '/v1/branding', { key: org.apiKey })).body.data;
    const page = await get(`/p/${reference}`);
    assert.deepEqual(logoTags(page.body), [`/p/${reference}/logo/${branding.light.sha256}`]);
    assert.equal((await get(`/p/${reference}/logo/${sha256(logo)}`)).statusCode, 404);
    const image = await get(`/p/${reference}/logo/${branding.light.sha256}`);
    assert.equal(image.headers['content-type'], 'image/svg+xml');
    assert.equal(sha256(image.rawPayload), branding.light.sha256);

    // Removed: no logo on the page, and none served.
    assert.equal((await call(api.app, 'DELETE', '/v1/branding/logo', { key: org.apiKey })).status, 204);
    assert.deepEqual(logoTags((await get(`/p/${reference}`)).body), []);
    assert.equal((await get(`/p/${reference}/logo/${branding.light.sha256}`)).statusCode, 404);
  });
});
