import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../../activities/pdf/chromium-renderer.ts';
import { createFakturaClient, type FakturaClient } from '../../clients/typescript/index.ts';
import { createTestOrg, newIdempotencyKey, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';

/**
 * A person pays an invoice on the hosted page, in a real browser (headless Chromium), at phone width: types the code
 * from the invoice, sees the balance, pays with the test provider (declining once first), and sees the confirmation.
 * The invoice is then paid, by exactly one card payment, although the provider delivered its events with a late
 * failure and a duplicate success, as real providers may. The API is called over HTTP with the typed client
 * (clients/typescript), as an integrator would.
 */
describe('the hosted pay page in a browser', function () {
  this.timeout(60_000);
  let api: TestApp;
  let pay: TestPay;
  let browser: Browser;
  let org: TestOrg;
  let client: FakturaClient;
  let customerId: string;
  const idempotent = () => ({ 'idempotency-key': newIdempotencyKey() });

  before(async () => {
    pay = await startTestPay({ listen: true });
    api = await startTestApp({ payBaseUrl: pay.baseUrl });
    await api.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
    org = await createTestOrg({ name: 'Bager Hansen ApS' });
    client = createFakturaClient({ baseUrl: `http://127.0.0.1:${(api.app.server.address() as AddressInfo).port}`, apiKey: org.apiKey });
    customerId = (await client.POST('/v1/customers', { params: { header: idempotent() }, body: { type: 'company', name: 'Kunde A/S' } })).data!.data.id;
  });
  after(async () => {
    await browser?.close();
    await pay?.close();
    await api?.close();
  });

  async function issuedWithLink(oere: number) {
    const inv = await client.POST('/v1/invoices', {
      params: { query: { issue: true }, header: idempotent() },
      body: { customerId, dueDate: '2031-03-14', lines: [{ description: 'Kagebord', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' }] },
    });
    assert.equal(inv.response.status, 201, JSON.stringify(inv.error));
    const id = inv.data!.data.id;
    const link = (await client.POST('/v1/invoices/{invoiceId}/payment-link', { params: { path: { invoiceId: id }, header: idempotent() } })).data!.data;
    return { id, number: inv.data!.data.number as number, link };
  }

  const phone = async (locale: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, locale, hasTouch: true, isMobile: true });
    return context.newPage();
  };

  /**
   * WCAG contrast ratio of an element's text against the first opaque background behind it. Runs in the page, so it
   * is given as source text (the project's TypeScript has no DOM types).
   */
  const contrast = (page: Page, selector: string) =>
    page.evaluate<number>(`(() => {
      const el = document.querySelector(${JSON.stringify(selector)});
      const rgb = (c) => (c.match(/\\d+(\\.\\d+)?/g) || []).slice(0, 3).map(Number);
      const lum = (c) => {
        const [r, g, b] = c.map((v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      let bg = 'rgba(0, 0, 0, 0)';
      for (let at = el; at && /rgba\\(0, 0, 0, 0\\)|transparent/.test(bg); at = at.parentElement) bg = getComputedStyle(at).backgroundColor;
      const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(bg))];
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    })()`);
  const focused = (page: Page, what: 'id' | 'textContent') => page.evaluate(`document.activeElement && document.activeElement.${what}`);

  it('type the code, see the balance, pay with the test provider, see the confirmation; the invoice is paid once', async () => {
    const inv = await issuedWithLink(1_234_567);
    const page = await phone('da-DK');

    await page.goto(`${pay.baseUrl}/`);
    assert.equal(await page.getAttribute('html', 'lang'), 'da');
    assert.equal(await page.title(), 'Betal en faktura · Betaling af faktura');
    // Keyboard order: the language switch, the code field (reached through its label), the button.
    await page.keyboard.press('Tab');
    assert.equal(await focused(page, 'textContent'), 'English');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page, 'id'), 'code');
    await page.keyboard.press('Tab');
    assert.equal(await focused(page, 'textContent'), 'Find faktura');
    assert.ok((await contrast(page, 'button.primary')) >= 4.5);
    assert.ok((await contrast(page, '.hint')) >= 4.5);

    // A mistyped code first: the error is announced and tied to the field.
    await page.getByLabel('Betalingskode').fill('zzzz-zzzz');
    await page.getByRole('button', { name: 'Find faktura' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /Vi kan ikke finde en faktura med den kode/);
    assert.equal(await page.getByLabel('Betalingskode').getAttribute('aria-invalid'), 'true');

    // The code as a person types it off paper: lower case, no hyphen.
    await page.getByLabel('Betalingskode').fill(inv.link.paymentCode.replace('-', '').toLowerCase());
    await page.keyboard.press('Enter');
    await page.waitForURL(`${pay.baseUrl}/p/${inv.link.reference}?lang=da`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), `Faktura nr. ${inv.number}`);
    assert.equal(await page.locator('.brand').innerText(), 'Bager Hansen ApS');
    assert.equal(await page.getByTestId('balance').innerText(), '12.345,67 kr.');
    assert.match(await page.locator('.facts').innerText(), /Forfaldsdato\s+14\. marts 2031/);
    // Usable at phone width: nothing scrolls sideways, buttons are large enough to tap.
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'));
    const box = await page.getByRole('button', { name: 'Betal med kort' }).boundingBox();
    assert.ok(box && box.height >= 44 && box.width >= 300, JSON.stringify(box));

    // Part of it is paid by bank transfer meanwhile: the checkout is for the balance when the person clicks.
    const today = (await client.GET('/v1/invoices/{invoiceId}', { params: { path: { invoiceId: inv.id } } })).data!.data.issueDate!;
    await client.POST('/v1/invoices/{invoiceId}/payments', {
      params: { path: { invoiceId: inv.id }, header: idempotent() },
      body: { amountOere: 234_567, paymentDate: today },
    });
    await page.getByRole('button', { name: 'Betal med kort' }).click();
    await page.waitForURL(/\/test-provider\/checkout\//);
    assert.equal(await page.getByTestId('provider-amount').innerText(), '10.000,00 kr.');
    assert.match(await page.locator('.banner').innerText(), /Testtilstand/);

    // Declined once, then approved.
    await page.getByRole('button', { name: 'Afvis betaling' }).click();
    await page.getByRole('alert').waitFor();
    assert.match(await page.getByRole('alert').innerText(), /Betalingen blev afvist/);
    await page.getByRole('button', { name: 'Godkend betaling' }).click();
    await page.waitForURL(new RegExp(`/p/${inv.link.reference}/return\\?session=`));
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Tak for din betaling');
    const status = await page.getByRole('status').innerText();
    assert.match(status, new RegExp(`Vi har modtaget 10\\.000,00 kr\\. for faktura nr\\. ${inv.number}\\.`));
    assert.match(status, /Fakturaen er nu betalt\./);

    // The invoice is paid, by the bank transfer and exactly one card payment.
    await pay.provider.idle();
    const invoice = (await client.GET('/v1/invoices/{invoiceId}', { params: { path: { invoiceId: inv.id } } })).data!.data;
    assert.deepEqual([invoice.status, invoice.paidOere, invoice.balanceOere], ['paid', 1_234_567, 0]);
    const payments = (await client.GET('/v1/invoices/{invoiceId}/payments', { params: { path: { invoiceId: inv.id } } })).data!.data;
    assert.deepEqual(payments.map((p) => [p.source, p.amountOere, p.outcome]), [
      ['card', 1_000_000, 'paid_in_full'],
      ['manual', 234_567, 'partial'],
    ]);
    // The provider delivered the decline, the success, the decline again (late) and the success again; the two
    // redeliveries carry their events' ids and change nothing, so each event is recorded once.
    const effects = await testDb().db.sql<{ type: string; effect: string }[]>`
      SELECT e.type, e.effect FROM provider_events e JOIN checkout_sessions s ON s.id = e.checkout_session_id
      WHERE s.invoice_id = ${inv.id} ORDER BY e.received_at`;
    assert.deepEqual(effects.map((e) => `${e.type}:${e.effect}`), ['payment_failed:failed', 'payment_succeeded:booked']);
    const logs = pay.logs();
    assert.equal((logs.match(/"url":"\/callbacks\/test"[^}]*\},"res":\{"statusCode":200\}/g) ?? []).length, 4, 'four deliveries, all answered 200');

    // Back on the invoice page: nothing left to pay.
    await page.getByRole('link', { name: 'Tilbage til fakturaen' }).click();
    assert.equal(await page.getByTestId('balance').innerText(), '0,00 kr.');
    assert.match(await page.getByRole('status').innerText(), /Der er intet at betale/);
    await page.context().close();
  });

  it('in English, by link, with MobilePay; cancelling at the provider leads back to the unpaid invoice @cluster', async () => {
    const inv = await issuedWithLink(50_000);
    const page = await phone('en-GB');
    await page.goto(inv.link.url);
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), `Invoice no. ${inv.number}`);
    assert.equal(await page.getByTestId('balance').innerText(), 'DKK 500.00');
    await page.getByRole('button', { name: 'Pay with MobilePay' }).click();
    await page.waitForURL(/\/test-provider\/checkout\//);
    assert.match(await page.locator('dl').innerText(), /MobilePay/);
    await page.getByRole('button', { name: 'Cancel and go back' }).click();
    await page.waitForURL(`${pay.baseUrl}/p/${inv.link.reference}?lang=en`);
    assert.equal(await page.getByTestId('balance').innerText(), 'DKK 500.00');
    // The language switch keeps the page.
    await page.getByRole('link', { name: 'Dansk' }).click();
    assert.equal(await page.getByTestId('balance').innerText(), '500,00 kr.');
    await page.getByRole('button', { name: 'Betal med MobilePay' }).click();
    await page.getByRole('button', { name: 'Godkend betaling' }).click();
    await page.waitForURL(/\/return\?session=/);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Tak for din betaling');
    const payments = (await client.GET('/v1/invoices/{invoiceId}/payments', { params: { path: { invoiceId: inv.id } } })).data!.data;
    assert.deepEqual(payments.map((p) => [p.source, p.amountOere]), [['mobilepay', 50_000]]);
    await page.context().close();
  });
});
