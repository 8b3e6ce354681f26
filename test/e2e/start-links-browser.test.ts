import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../../activities/pdf/chromium-renderer.ts';
import { createFakturaClient, type FakturaClient } from '../../clients/typescript/index.ts';
import { createTestOrg, newIdempotencyKey, startTestApp, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';

/**
 * A person completes a start link in a real browser (headless Chromium): the integrator asks the API for a
 * verification session over HTTP, the person opens its url on the pay service, sees which step it is and for whom,
 * and clicks "Complete"; the organisation is then verified. The start-link routes are called with fetch (they are
 * newer than the committed typed client); the settings are read through the client.
 */
describe('start links in a browser', function () {
  this.timeout(60_000);
  let api: TestApp;
  let pay: TestPay;
  let browser: Browser;
  let apiUrl: string;

  before(async () => {
    pay = await startTestPay({ listen: true });
    api = await startTestApp({ payBaseUrl: pay.baseUrl });
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    apiUrl = `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
  });
  after(async () => {
    await browser?.close();
    await pay?.close();
    await api?.close();
  });

  const open = async (org: TestOrg, path: string) => {
    const res = await fetch(`${apiUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'idempotency-key': newIdempotencyKey() } });
    return { status: res.status, location: res.headers.get('location'), body: (await res.json()) as { data: { id: string; url: string | null; status: string; expiresAt: string | null } } };
  };
  const verificationOf = async (client: FakturaClient) => (await client.GET('/v1/settings')).data!.data.verification;
  const browse = async (locale: string): Promise<Page> => (await browser.newContext({ viewport: { width: 360, height: 740 }, locale })).newPage();

  it('opens the verification link, clicks Complete, and the organisation is verified @cluster', async () => {
    const org = await createTestOrg({ name: 'Bager Hansen ApS' });
    const client = createFakturaClient({ baseUrl: apiUrl, apiKey: org.apiKey });
    const session = await open(org, '/v1/verification-sessions');
    assert.equal(session.status, 201);
    assert.equal(session.location, null);
    assert.equal(session.body.data.status, 'pending');
    assert.equal(await verificationOf(client), 'pending');

    const page = await browse('en-GB');
    await page.goto(session.body.data.url!);
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    assert.equal(await page.title(), 'Verify business identity · Bager Hansen ApS');
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Verify business identity');
    assert.match(await page.locator('main').innerText(), /Bager Hansen ApS needs to verify the business's identity/);
    // The pay page's stylesheet applies (the CSP allows it): the primary button is the pay page's blue.
    assert.equal(await page.evaluate('getComputedStyle(document.querySelector("button.primary")).backgroundColor'), 'rgb(11, 83, 148)');

    await page.getByRole('button', { name: 'Complete' }).click();
    await page.waitForURL(`${session.body.data.url}?lang=en`);
    assert.equal(await page.getByRole('status').innerText(), 'The business identity is verified. Payouts are no longer held.');
    assert.equal(await verificationOf(client), 'verified');

    const repeat = await open(org, '/v1/verification-sessions');
    assert.equal(repeat.status, 200);
    assert.deepEqual(repeat.body.data, { id: session.body.data.id, url: null, status: 'verified', expiresAt: null });
    await page.context().close();
  });

  it('in Danish: Afbryd abandons the card setup; the next call gives a new link that completes as ready @cluster', async () => {
    const org = await createTestOrg({ name: 'Kortfelter ApS' });
    const first = await open(org, '/v1/card-setup-sessions');
    assert.equal(first.status, 201);
    const page = await browse('da-DK');
    await page.goto(first.body.data.url!);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Opsæt kortfelter');
    // The language switch keeps the page.
    await page.getByRole('link', { name: 'English' }).click();
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Set up card fields');
    await page.getByRole('link', { name: 'Dansk' }).click();
    await page.getByRole('button', { name: 'Afbryd' }).click();
    await page.waitForURL(`${first.body.data.url}?lang=da`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Trinnet er afbrudt');

    const second = await open(org, '/v1/card-setup-sessions');
    assert.equal(second.status, 201);
    assert.notEqual(second.body.data.id, first.body.data.id);
    await page.goto(second.body.data.url!);
    await page.getByRole('button', { name: 'Gennemfør' }).click();
    await page.waitForURL(`${second.body.data.url}?lang=da`);
    assert.equal(await page.getByRole('status').innerText(), 'Kortfelterne er sat op og klar til brug.');
    assert.deepEqual((await open(org, '/v1/card-setup-sessions')).body.data, { id: second.body.data.id, url: null, status: 'ready', expiresAt: null });
    await page.context().close();
  });
});
