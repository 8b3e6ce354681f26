import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';
import { signTestCallback, type TestProviderEventBody } from '../../services/payments/providers/test-provider.ts';
import { redactPayUrl } from '../../services/pay/app.ts';
import { copenhagenToday } from '../../services/shared/clock.ts';

const line = (oere: number) => ({ description: 'Konsulentydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** Handlebars escapes `=` in attribute values as &#x3D; (valid HTML); assertions read the decoded text. */
const decoded = (res: { body: string }) => res.body.replace(/&#x3D;/g, '=').replace(/&amp;/g, '&');

/** The hosted pay page and the payment-provider callbacks, through the pay service's routes. */
describe('pay service', () => {
  let api: TestApp;
  let pay: TestPay;
  let org: TestOrg;
  let customerId: string;
  const sql = () => testDb().db.sql;

  before(async () => {
    api = await startTestApp({ payBaseUrl: 'http://pay.test' });
    pay = await startTestPay();
    org = await createTestOrg({ name: 'Bager Hansen ApS' });
    customerId = (await call(api.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S', language: 'da' } })).body.data.id;
  });
  after(async () => {
    await pay?.close();
    await api?.close();
  });

  /** An issued invoice of `oere` with its payment link. */
  async function linked(oere: number, dueDate = '2031-03-14') {
    const inv = await call(api.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, dueDate, lines: [line(oere)] } });
    assert.equal(inv.status, 201, inv.raw);
    const link = (await call(api.app, 'POST', `/v1/invoices/${inv.body.data.id}/payment-link`, { key: org.apiKey })).body.data;
    return { id: inv.body.data.id as string, number: inv.body.data.number as number, reference: link.reference as string, code: link.paymentCode as string };
  }

  const page = (url: string, headers: Record<string, string> = {}) => pay.app.inject({ method: 'GET', url, headers });
  const form = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    pay.app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload: new URLSearchParams(fields).toString() });

  /** Opens a checkout as the customer's click does; returns our session id and the provider's checkout URL. */
  async function checkout(reference: string, method: 'card' | 'mobilepay' = 'card') {
    const res = await form(`/p/${reference}/checkout`, { method, lang: 'da' });
    assert.equal(res.statusCode, 303, res.body);
    const [s] = await sql()<{ id: string; provider_session_id: string; amount_oere: number; checkout_url: string }[]>`
      SELECT id, provider_session_id, amount_oere, checkout_url FROM checkout_sessions WHERE checkout_url = ${res.headers.location as string}`;
    assert.ok(s);
    return s;
  }

  let eventCounter = 0;
  const event = (
    session: { id: string; provider_session_id: string },
    type: TestProviderEventBody['type'],
    over: Partial<TestProviderEventBody['data']> & { id?: string; payment?: string } = {},
  ): TestProviderEventBody => ({
    id: over.id ?? `tevt_test_${++eventCounter}_${randomBytes(4).toString('hex')}`,
    type,
    created: Math.floor(Date.now() / 1000),
    data: {
      session: session.provider_session_id,
      client_reference: session.id,
      payment: over.payment ?? `tpay_test_${randomBytes(8).toString('hex')}`,
      amount: 12_500,
      currency: 'DKK',
      method: 'card',
      ...over,
    },
  });

  const deliver = (body: unknown, opts: { secret?: Buffer; t?: number; header?: string | null; raw?: string } = {}) => {
    const payload = opts.raw ?? JSON.stringify(body);
    const t = opts.t ?? Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.header !== null) headers['test-provider-signature'] = opts.header ?? signTestCallback(opts.secret ?? pay.secret, payload, t);
    return pay.app.inject({ method: 'POST', url: '/callbacks/test', headers, payload });
  };

  const invoice = async (id: string) => (await call(api.app, 'GET', `/v1/invoices/${id}`, { key: org.apiKey })).body.data;
  const payments = (invoiceId: string) =>
    sql()<{ id: string; source: string; booking_key: string; amount_oere: number; outcome: string; surplus_oere: number; payment_date: string }[]>`
      SELECT id, source, booking_key, amount_oere, outcome, surplus_oere, payment_date FROM payments WHERE invoice_id = ${invoiceId} ORDER BY id`;
  const sessionRow = async (id: string) =>
    (await sql()<{ status: string; payment_id: string | null; failure_reason: string | null }[]>`SELECT status, payment_id, failure_reason FROM checkout_sessions WHERE id = ${id}`)[0]!;

  describe('pages', () => {
    it('the code page is a labelled, accessible form in Danish by default and in English on request @cluster', async () => {
      const da = await page('/');
      assert.equal(da.statusCode, 200);
      assert.match(String(da.headers['content-type']), /^text\/html; charset=utf-8/);
      assert.match(da.body, /<html lang="da">/);
      assert.match(da.body, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
      assert.match(da.body, /<label for="code">Betalingskode<\/label>/);
      assert.match(da.body, /<input id="code" name="code"[^>]* aria-describedby="code-hint"/);
      assert.match(decoded(da), /<a href="\/\?lang=en" lang="en" hreflang="en">English<\/a>/);
      assert.equal(da.headers['cache-control'], 'no-store');
      assert.equal(da.headers['referrer-policy'], 'no-referrer');
      assert.match(String(da.headers['content-security-policy']), /default-src 'none'; style-src 'self'/);
      const en = await page('/?lang=en');
      assert.match(en.body, /<html lang="en">/);
      assert.match(en.body, /<label for="code">Payment code<\/label>/);
      const byBrowser = await page('/', { 'accept-language': 'en-GB,en;q=0.9,da;q=0.5' });
      assert.match(byBrowser.body, /<html lang="en">/);
      const css = await page('/assets/pay.css');
      assert.equal(css.statusCode, 200);
      assert.match(String(css.headers['content-type']), /^text\/css/);
    });

    it('the invoice page (by link) shows creditor, number, due date and the balance as it is now', async () => {
      const inv = await linked(250_000);
      const first = await page(`/p/${inv.reference}?lang=da`);
      assert.equal(first.statusCode, 200);
      assert.match(first.body, /<p class="brand">Bager Hansen ApS<\/p>/);
      assert.match(first.body, new RegExp(`<h1>Faktura nr\\. ${inv.number}</h1>`));
      assert.match(first.body, /<dt>Forfaldsdato<\/dt><dd>14\. marts 2031<\/dd>/);
      assert.match(first.body, /<dd data-testid="balance">2\.500,00 kr\.<\/dd>/);
      assert.match(first.body, /<button type="submit" name="method" value="card" class="primary">Betal med kort<\/button>/);
      // A payment registered through the API shows on the next read of the page.
      const paid = await call(api.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 100_000, paymentDate: copenhagenToday(new Date()) } });
      assert.equal(paid.status, 201);
      const after = await page(`/p/${inv.reference}?lang=en`);
      assert.match(after.body, /<html lang="en">/);
      assert.match(after.body, /<dt>Due date<\/dt><dd>14 March 2031<\/dd>/);
      assert.match(after.body, /<dd data-testid="balance">DKK 1,500.00<\/dd>/);
      await call(api.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 150_000, paymentDate: copenhagenToday(new Date()) } });
      const settled = await page(`/p/${inv.reference}?lang=da`);
      assert.doesNotMatch(settled.body, /name="method"/);
      assert.match(settled.body, /<p class="status" role="status">Der er intet at betale på denne faktura\. Tak\.<\/p>/);
    });

    it('an unknown or malformed reference is a 404 page that leads to the code form', async () => {
      for (const ref of ['0'.repeat(32), 'not-a-reference']) {
        const res = await page(`/p/${ref}`);
        assert.equal(res.statusCode, 404);
        assert.match(decoded(res), /<a href="\/\?lang=da">Indtast betalingskode<\/a>/);
      }
    });

    it('a code leads to the invoice in any case and with or without the hyphen; a wrong one says so', async () => {
      const inv = await linked(10_000);
      for (const typed of [inv.code, inv.code.toLowerCase(), inv.code.replace('-', ''), ` ${inv.code.replace('-', ' ')} `]) {
        const res = await form('/code', { code: typed, lang: 'en' });
        assert.equal(res.statusCode, 303, typed);
        assert.equal(res.headers.location, `/p/${inv.reference}?lang=en`);
      }
      const malformed = await form('/code', { code: 'ABC', lang: 'da' });
      assert.equal(malformed.statusCode, 400);
      assert.match(malformed.body, /<p id="code-error" class="error" role="alert">Det er ikke en gyldig betalingskode/);
      assert.match(malformed.body, /aria-invalid="true" aria-describedby="code-hint code-error"/);
      const unknown = await form('/code', { code: 'ZZZZ-ZZZZ', lang: 'da' }, { 'x-forwarded-for': '1.1.1.1' });
      assert.equal(unknown.statusCode, 404);
      assert.match(unknown.body, /Vi kan ikke finde en faktura med den kode/);
      assert.match(unknown.body, /value="ZZZZ-ZZZZ"/);
    });

    it('code look-ups are rate limited per client: the 11th in a minute is 429 with Retry-After, and allowed again later', async () => {
      let now = 0;
      const limited = await startTestPay({ limiterClock: () => now, lookupLimits: { perClientPerMinute: 10, missesPerMinute: 1000 } });
      try {
        const inv = await linked(10_000);
        for (let i = 0; i < 10; i++) assert.equal((await limited.app.inject({ method: 'POST', url: '/code', headers: FORM, payload: `code=${i}${i}${i}${i}-AAAA` })).statusCode, 404);
        const blocked = await limited.app.inject({ method: 'POST', url: '/code', headers: FORM, payload: `code=${inv.code}` });
        assert.equal(blocked.statusCode, 429);
        assert.equal(blocked.headers['retry-after'], '6');
        assert.match(blocked.body, /For mange forsøg\. Vent 6 sekunder/);
        now += 6000;
        const again = await limited.app.inject({ method: 'POST', url: '/code', headers: FORM, payload: `code=${inv.code}` });
        assert.equal(again.statusCode, 303);
      } finally {
        await limited.close();
      }
    });

    it('misses from many clients drain a shared budget, which stops guessing spread over addresses', async () => {
      const now = 0;
      const limited = await startTestPay({ trustProxy: true, limiterClock: () => now, lookupLimits: { perClientPerMinute: 10, missesPerMinute: 5 } });
      try {
        for (let i = 0; i < 5; i++) {
          const res = await limited.app.inject({ method: 'POST', url: '/code', headers: { ...FORM, 'x-forwarded-for': `10.0.0.${i}` }, payload: 'code=ZZZZ-ZZZ0' });
          assert.equal(res.statusCode, 404);
        }
        const sixth = await limited.app.inject({ method: 'POST', url: '/code', headers: { ...FORM, 'x-forwarded-for': '10.0.0.99' }, payload: 'code=ZZZZ-ZZZ1' });
        assert.equal(sixth.statusCode, 429);
        assert.equal(sixth.headers['retry-after'], '12');
      } finally {
        await limited.close();
      }
    });

    it('logs never show the link reference or a checkout token', () => {
      assert.equal(redactPayUrl(`/p/${'a'.repeat(32)}/return?session=abc&lang=da`), '/p/[reference]/return?session=[session]&lang=da');
      assert.equal(redactPayUrl('/test-provider/checkout/eyJ.abc?declined=1'), '/test-provider/checkout/[token]?declined=1');
    });
  });

  describe('checkout', () => {
    it('opens a checkout with the provider for the balance at that moment, and reuses it for a second click', async () => {
      const inv = await linked(80_000);
      const first = await checkout(inv.reference);
      assert.equal(first.amount_oere, 80_000);
      assert.ok(first.checkout_url.startsWith('http://pay.test/test-provider/checkout/'));
      const again = await checkout(inv.reference);
      assert.equal(again.id, first.id, 'the same checkout while nothing changed');
      // Another payment method, or another language, is another checkout with the provider.
      const wallet = await checkout(inv.reference, 'mobilepay');
      assert.notEqual(wallet.id, first.id);
      const english = await form(`/p/${inv.reference}/checkout`, { method: 'card', lang: 'en' });
      assert.equal(english.statusCode, 303);
      const [en] = await sql()<{ id: string }[]>`SELECT id FROM checkout_sessions WHERE checkout_url = ${english.headers.location as string}`;
      assert.ok(en && en.id !== first.id && en.id !== wallet.id, 'a checkout of its own for English');
      // A payment in between: the next checkout is for what is left.
      await call(api.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 30_000, paymentDate: copenhagenToday(new Date()) } });
      const later = await checkout(inv.reference);
      assert.notEqual(later.id, first.id);
      assert.equal(later.amount_oere, 50_000);
      // The provider's page shows that amount, in the customer's language.
      const providerPage = await page(later.checkout_url.replace('http://pay.test', ''));
      assert.equal(providerPage.statusCode, 200);
      assert.match(providerPage.body, /<dd data-testid="provider-amount">500,00 kr\.<\/dd>/);
      assert.match(providerPage.body, /Testtilstand: der trækkes ingen penge\./);
    });

    it('a provider that cannot open a checkout: 502, the invoice page with a notice, and nothing open left behind', async () => {
      const inv = await linked(7_000);
      // The provider is a stand-in for a third party: its outage is simulated on its side of the port.
      const provider = pay.provider.provider;
      const working = Object.getOwnPropertyDescriptor(provider, 'createCheckout')!;
      provider.createCheckout = () => Promise.reject(new Error('connect ECONNREFUSED provider'));
      try {
        const res = await form(`/p/${inv.reference}/checkout`, { method: 'card', lang: 'en' });
        assert.equal(res.statusCode, 502);
        assert.match(res.body, /The payment provider is not answering right now\. No money has been taken\./);
        assert.match(res.body, new RegExp(`Invoice no\\. ${inv.number}`));
      } finally {
        Object.defineProperty(provider, 'createCheckout', working);
      }
      const [open] = await sql()`SELECT 1 FROM checkout_sessions s JOIN payment_links l ON l.invoice_id = s.invoice_id
                                 WHERE l.reference = ${inv.reference} AND s.checkout_url IS NOT NULL`;
      assert.equal(open, undefined, 'no checkout a customer could be sent to');
      // The provider answers again: the next click opens one.
      assert.ok((await checkout(inv.reference)).checkout_url);
    });

    it('a settled invoice opens no checkout: the click leads back to the invoice page', async () => {
      const inv = await linked(5_000);
      await call(api.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 5_000, paymentDate: copenhagenToday(new Date()) } });
      const res = await form(`/p/${inv.reference}/checkout`, { method: 'card', lang: 'da' });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `/p/${inv.reference}?lang=da`);
      const [n] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM checkout_sessions WHERE invoice_id = ${inv.id}`;
      assert.equal(n!.n, 0);
    });
  });

  describe('provider callbacks', () => {
    it('a signed payment.succeeded books the payment once, by card, for the amount captured; the invoice is paid', async () => {
      const inv = await linked(12_500);
      const s = await checkout(inv.reference);
      const succeeded = event(s, 'payment.succeeded');
      const res = await deliver(succeeded);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), { received: true, effect: 'booked' });
      const rows = await payments(inv.id);
      assert.deepEqual(rows.map((r) => ({ ...r, id: 'x' })), [{
        id: 'x', source: 'card', booking_key: succeeded.data.payment, amount_oere: 12_500, outcome: 'paid_in_full', surplus_oere: 0, payment_date: copenhagenToday(new Date()),
      }]);
      const after = await invoice(inv.id);
      assert.deepEqual([after.status, after.paidOere, after.balanceOere], ['paid', 12_500, 0]);
      assert.deepEqual(await sessionRow(s.id), { status: 'succeeded', payment_id: rows[0]!.id, failure_reason: null });
      const listed = (await call(api.app, 'GET', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey })).body.data;
      assert.equal(listed[0].source, 'card');
      assert.equal(listed[0].providerPaymentId, succeeded.data.payment);
      const [received] = await sql()<{ data: Record<string, unknown> }[]>`SELECT data FROM events WHERE entity_id = ${rows[0]!.id}`;
      assert.equal(received!.data.source, 'card');
    });

    it('a duplicate delivery books nothing more, also when ten arrive at once @cluster', async () => {
      const inv = await linked(12_500);
      const s = await checkout(inv.reference);
      const succeeded = event(s, 'payment.succeeded');
      const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(succeeded)));
      for (const a of answers) assert.equal(a.statusCode, 200, a.body);
      const effects = answers.map((a) => a.json().effect as string).sort();
      assert.equal(effects.filter((e) => e === 'booked').length, 1, effects.join());
      assert.ok(effects.every((e) => ['booked', 'duplicate', 'already_booked'].includes(e)), effects.join());
      assert.equal((await payments(inv.id)).length, 1);
      const again = await deliver(succeeded);
      assert.deepEqual(again.json(), { received: true, effect: 'duplicate' });
      // Another event about the same provider payment (a different event id) finds it booked.
      const other = await deliver(event(s, 'payment.succeeded', { payment: succeeded.data.payment }));
      assert.deepEqual(other.json(), { received: true, effect: 'already_booked' });
      assert.equal((await payments(inv.id)).length, 1);
      assert.equal((await invoice(inv.id)).paidOere, 12_500);
      const [n] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM events WHERE type = 'payment.received' AND data->>'invoiceId' = ${inv.id}`;
      assert.equal(n!.n, 1);
    });

    it('out of order: a failure arriving after the success is stale and changes nothing', async () => {
      const inv = await linked(12_500);
      const s = await checkout(inv.reference);
      const failed = event(s, 'payment.failed', { failure_reason: 'card_declined' });
      const succeeded = event(s, 'payment.succeeded');
      assert.deepEqual((await deliver(succeeded)).json(), { received: true, effect: 'booked' });
      assert.deepEqual((await deliver(failed)).json(), { received: true, effect: 'stale' });
      const row = await sessionRow(s.id);
      assert.equal(row.status, 'succeeded');
      assert.equal((await invoice(inv.id)).status, 'paid');
      assert.equal((await payments(inv.id)).length, 1);
    });

    it('in order: a declined attempt, then the approved one: recorded as failed, then booked', async () => {
      const inv = await linked(12_500);
      const s = await checkout(inv.reference, 'mobilepay');
      assert.deepEqual((await deliver(event(s, 'payment.failed', { method: 'mobilepay', failure_reason: 'rejected_by_user' }))).json(), { received: true, effect: 'failed' });
      assert.deepEqual(await sessionRow(s.id), { status: 'failed', payment_id: null, failure_reason: 'rejected_by_user' });
      assert.equal((await payments(inv.id)).length, 0);
      assert.deepEqual((await deliver(event(s, 'payment.succeeded', { method: 'mobilepay' }))).json(), { received: true, effect: 'booked' });
      const rows = await payments(inv.id);
      assert.deepEqual(rows.map((r) => r.source), ['mobilepay']);
      assert.equal((await sessionRow(s.id)).status, 'succeeded');
    });

    it('a payment larger than the balance it meets (paid meanwhile) is booked in full and the surplus kept as credit', async () => {
      const inv = await linked(12_500);
      const s = await checkout(inv.reference);
      await call(api.app, 'POST', `/v1/invoices/${inv.id}/payments`, { key: org.apiKey, body: { amountOere: 10_000, paymentDate: copenhagenToday(new Date()) } });
      assert.deepEqual((await deliver(event(s, 'payment.succeeded'))).json(), { received: true, effect: 'booked' });
      const card = (await payments(inv.id)).find((p) => p.source === 'card')!;
      assert.deepEqual([card.amount_oere, card.outcome, card.surplus_oere], [12_500, 'registered', 10_000]);
      assert.equal((await invoice(inv.id)).balanceOere, -10_000);
    });

    it('forged callbacks are refused with 401 invalid_signature and book nothing', async () => {
      const inv = await linked(12_500);
      const s = await checkout(inv.reference);
      const body = event(s, 'payment.succeeded');
      const payload = JSON.stringify(body);
      const now = Math.floor(Date.now() / 1000);
      const forged = [
        deliver(body, { secret: Buffer.alloc(32, 1) }),
        deliver(body, { header: null }),
        deliver(body, { header: 'garbage' }),
        deliver(body, { header: `t=${now},v1=${'0'.repeat(64)}` }),
        // Signed, then changed on the way: the amount grew.
        deliver(body, { header: signTestCallback(pay.secret, payload, now), raw: payload.replace('"amount":12500', '"amount":99999') }),
        // A genuine signature replayed long after: refused as stale.
        deliver(body, { t: now - 600 }),
        deliver(body, { t: now + 600 }),
      ];
      for (const res of await Promise.all(forged)) {
        assert.equal(res.statusCode, 401, res.body);
        assert.equal(res.json().error.code, 'invalid_signature');
      }
      assert.equal((await payments(inv.id)).length, 0);
      assert.equal((await sessionRow(s.id)).status, 'open');
      const [n] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM provider_events WHERE event_id = ${body.id}`;
      assert.equal(n!.n, 0);
      // The same event with its real signature still books.
      assert.equal((await deliver(body)).json().effect, 'booked');
    });

    it('a signed but malformed event is 400 invalid_event; an unknown checkout is 404; other event types are ignored', async () => {
      const inv = await linked(12_500);
      const s = await checkout(inv.reference);
      const bad = await deliver(undefined, { raw: '{"id":"x"' });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.code, 'invalid_event');
      const negative = await deliver(event(s, 'payment.succeeded', { amount: -5 }));
      assert.equal(negative.statusCode, 400);
      const euro = await deliver(event(s, 'payment.succeeded', { currency: 'EUR' }));
      assert.equal(euro.statusCode, 400);
      assert.equal(euro.json().error.code, 'invalid_event');
      const unknown = await deliver(event({ id: '0190a0a0-0000-7000-8000-000000000000', provider_session_id: 'tcs_x' }, 'payment.succeeded'));
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().error.code, 'checkout_session_not_found');
      const other = await deliver({ id: `tevt_other_${Date.now()}`, type: 'checkout.expired', created: Math.floor(Date.now() / 1000), data: {} });
      assert.deepEqual(other.json(), { received: true, effect: 'ignored' });
      const wrongProvider = await pay.app.inject({ method: 'POST', url: '/callbacks/stripe', headers: { 'content-type': 'application/json' }, payload: '{}' });
      assert.equal(wrongProvider.statusCode, 404);
      // The API's envelope and codes: the request's id in the body and in the header, 415 for a body that is not JSON.
      assert.deepEqual(wrongProvider.json(), { error: { code: 'route_not_found', message: 'No such callback.', requestId: wrongProvider.headers['request-id'] } });
      const text = await pay.app.inject({ method: 'POST', url: '/callbacks/test', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
      assert.equal(text.statusCode, 415);
      assert.equal(text.json().error.code, 'unsupported_media_type');
      assert.match(String(text.headers['request-id']), /^req_[0-9a-f]{20}$/);
      assert.equal(text.json().error.requestId, text.headers['request-id']);
      const huge = await pay.app.inject({ method: 'POST', url: '/callbacks/test', headers: { 'content-type': 'application/json' }, payload: `"${'x'.repeat(70 * 1024)}"` });
      assert.equal(huge.statusCode, 413);
      assert.equal(huge.json().error.code, 'payload_too_large');
      // A path that cannot be decoded, too: the envelope on a callback, the not-found page elsewhere, each with its id.
      const undecodable = await pay.app.inject({ method: 'POST', url: '/callbacks/test%', headers: { 'content-type': 'application/json' }, payload: '{}' });
      assert.equal(undecodable.statusCode, 404);
      assert.deepEqual(undecodable.json(), { error: { code: 'route_not_found', message: 'The request path cannot be decoded.', requestId: undecodable.headers['request-id'] } });
      const page404 = await pay.app.inject({ method: 'GET', url: '/p/%E0%A4%A' });
      assert.equal(page404.statusCode, 404);
      assert.match(String(page404.headers['content-type']), /^text\/html/);
      assert.match(String(page404.headers['request-id']), /^req_[0-9a-f]{20}$/);
      assert.equal((await payments(inv.id)).length, 0);
    });

    it('the return page waits for the callback, then confirms; a failed checkout offers another try', async () => {
      const inv = await linked(12_500);
      const s = await checkout(inv.reference);
      const waiting = await page(`/p/${inv.reference}/return?session=${s.id}&lang=da`);
      assert.equal(waiting.statusCode, 200);
      assert.match(waiting.body, /<meta http-equiv="refresh" content="2">/);
      assert.match(waiting.body, /<h1>Betalingen behandles<\/h1>/);
      await deliver(event(s, 'payment.succeeded'));
      const done = await page(`/p/${inv.reference}/return?session=${s.id}&lang=da`);
      assert.doesNotMatch(done.body, /http-equiv="refresh"/);
      assert.match(done.body, /<h1>Tak for din betaling<\/h1>/);
      assert.match(done.body, new RegExp(`Vi har modtaget 125,00 kr\\. for faktura nr\\. ${inv.number}\\.`));
      assert.match(done.body, /Fakturaen er nu betalt\./);
      // Another link's reference does not show this checkout.
      const other = await linked(1_000);
      assert.equal((await page(`/p/${other.reference}/return?session=${s.id}`)).statusCode, 404);
      // A session id that is not one (36 hyphens pass a loose pattern, not PostgreSQL) is the same 404, never a 500.
      for (const bogus of ['-'.repeat(36), 'not-a-session']) {
        assert.equal((await page(`/p/${inv.reference}/return?session=${encodeURIComponent(bogus)}`)).statusCode, 404, bogus);
      }

      const inv2 = await linked(12_500);
      const s2 = await checkout(inv2.reference);
      await deliver(event(s2, 'payment.failed', { failure_reason: 'card_declined' }));
      const failed = await page(`/p/${inv2.reference}/return?session=${s2.id}&lang=en`);
      assert.match(failed.body, /<h1>The payment did not go through<\/h1>/);
      assert.match(decoded(failed), new RegExp(`<a class="button primary" href="/p/${inv2.reference}\\?lang=en">Try again</a>`));
    });
  });
});
