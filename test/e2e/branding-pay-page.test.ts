import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import sharp from 'sharp';
import { CHROMIUM_ARGS, findChromium } from '../../activities/pdf/chromium-renderer.ts';
import { call, createTestOrg, startTestApp, type TestApp } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';

/**
 * The logo on the hosted pay page in a real browser (headless Chromium): the image loads under the page's own
 * Content-Security-Policy and is drawn beside the creditor's name, at phone width.
 */
describe('the pay page shows the logo in a browser', function () {
  this.timeout(60_000);
  let api: TestApp;
  let pay: TestPay;
  let browser: Browser;

  before(async () => {
    pay = await startTestPay({ listen: true });
    api = await startTestApp({ payBaseUrl: pay.baseUrl });
    browser = await chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
  });
  after(async () => {
    await browser?.close();
    await pay?.close();
    await api?.close();
  });

  it('loads the PNG and the SVG logo under the page policy @cluster', async () => {
    const org = await createTestOrg({ name: 'Bager Hansen ApS' });
    const c = await call(api.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } });
    const line = { description: 'Kagebord', quantity: 1, unitPriceOere: 50_000, vatRateBps: 0, vatExemptionReason: 'ML13' };
    const inv = await call(api.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId: c.body.data.id, dueDate: '2031-03-14', lines: [line] } });
    const link = (await call(api.app, 'POST', `/v1/invoices/${inv.body.data.id}/payment-link`, { key: org.apiKey })).body.data;
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale: 'da-DK' });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) refused.push(m.text()); });

    for (const [image, mime] of [
      [await sharp({ create: { width: 240, height: 80, channels: 3, background: { r: 10, g: 80, b: 160 } } }).png().toBuffer(), 'image/png'],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 100"><rect width="300" height="100" fill="#0a5"/></svg>'), 'image/svg+xml'],
    ] as const) {
      const up = await call(api.app, 'PUT', '/v1/branding/logo', { key: org.apiKey, body: { data: image.toString('base64'), mime } });
      assert.equal(up.status, 200, up.raw);
      await page.goto(link.url);
      const logo = page.getByTestId('logo');
      await logo.waitFor();
      // Runs in the page, so it is given as source text (the project's TypeScript has no DOM types).
      const drawn = await page.evaluate<{ complete: boolean; naturalWidth: number; width: number; height: number }>(`(() => {
        const el = document.querySelector('[data-testid="logo"]');
        const box = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        const pad = (a, b) => parseFloat(style[a]) + parseFloat(style[b]);
        // The image's own drawn size, without the tile's padding.
        return { complete: el.complete, naturalWidth: el.naturalWidth, width: box.width - pad('paddingLeft', 'paddingRight'), height: box.height - pad('paddingTop', 'paddingBottom') };
      })()`);
      assert.equal(drawn.complete, true);
      assert.ok(drawn.naturalWidth > 0, `${mime}: the image did not load`);
      // Drawn within the header band, with its proportions (3:1).
      assert.ok(drawn.height > 0 && drawn.height <= 40 + 0.5, JSON.stringify(drawn));
      assert.ok(Math.abs(drawn.width / drawn.height - 3) < 0.35, JSON.stringify(drawn));
    }
    assert.deepEqual(refused, []);
    await context.close();
  });
});
