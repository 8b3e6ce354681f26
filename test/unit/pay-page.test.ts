import assert from 'node:assert/strict';
import { callableHost, payBaseUrl, readConfig } from '../../services/shared/config.ts';
import { formatOere } from '../../services/shared/money.ts';
import { formatDate, pickLanguage } from '../../services/pay/texts.ts';
import { LookupLimiter } from '../../services/pay/lookup-limiter.ts';
import { formFields } from '../../services/pay/plugins/body-parsers.ts';
import { parseTestEvent, signTestCallback, verifyTestSignature } from '../../services/payments/providers/test-provider.ts';
import { InvalidProviderEvent } from '../../services/payments/providers/provider.ts';

describe('pay page settings', () => {
  it('PAY_BASE_URL defaults to the pay service\'s own loopback address and is used as given otherwise', () => {
    const dflt = readConfig({});
    assert.deepEqual([dflt.payPort, dflt.payHost, dflt.payBaseUrl, dflt.payTrustProxy], [undefined, '127.0.0.1', undefined, false]);
    assert.equal(payBaseUrl(dflt), 'http://127.0.0.1:3001');
    assert.equal(payBaseUrl(readConfig({ PAY_PORT: '4100', PAY_HOST: '0.0.0.0' })), 'http://127.0.0.1:4100');
    assert.equal(payBaseUrl(readConfig({ PAY_BASE_URL: 'https://betal.bager.dk/' })), 'https://betal.bager.dk');
    assert.equal(readConfig({ PAY_TRUST_PROXY: 'true' }).payTrustProxy, true);
  });

  it('a listening host becomes a host a local client can call: wildcards to loopback, IPv6 in brackets', () => {
    assert.deepEqual(
      ['0.0.0.0', '::', '::1', 'fe80::1', '127.0.0.1', 'pay.local'].map(callableHost),
      ['127.0.0.1', '[::1]', '[::1]', '[fe80::1]', '127.0.0.1', 'pay.local'],
    );
  });

  it('refuses a PAY_BASE_URL that is not an http(s) URL, and a PAY_PORT that is not a number', () => {
    assert.throws(() => readConfig({ PAY_BASE_URL: 'betal.bager.dk' }), /PAY_BASE_URL is not a URL/);
    assert.throws(() => readConfig({ PAY_BASE_URL: 'ftp://betal.bager.dk' }), /PAY_BASE_URL must be an http\(s\) URL/);
    assert.throws(() => readConfig({ PAY_BASE_URL: 'https://betal.bager.dk/?x=1' }), /PAY_BASE_URL must be an http\(s\) URL/);
    assert.throws(() => readConfig({ PAY_PORT: 'abc' }), /PAY_PORT/);
    assert.throws(() => readConfig({ PAY_TRUST_PROXY: 'yes' }), /PAY_TRUST_PROXY/);
  });
});

describe('pay page wording', () => {
  it('formats money and dates per language', () => {
    assert.equal(formatOere(1_234_567, 'da'), '12.345,67 kr.');
    assert.equal(formatOere(1_234_567, 'en'), 'DKK 12,345.67');
    assert.equal(formatOere(5, 'da'), '0,05 kr.');
    assert.equal(formatDate('2031-03-14', 'da'), '14. marts 2031');
    assert.equal(formatDate('2031-03-14', 'en'), '14 March 2031');
  });

  it('chooses the language: explicit choice, then the browser, then the fallback, then Danish', () => {
    assert.equal(pickLanguage('en', 'da'), 'en');
    assert.equal(pickLanguage(undefined, 'de-DE,en;q=0.8,da;q=0.5'), 'en');
    assert.equal(pickLanguage(undefined, 'da-DK,en;q=0.9'), 'da');
    assert.equal(pickLanguage(undefined, 'de-DE'), 'da');
    assert.equal(pickLanguage(undefined, 'de-DE', 'en'), 'en');
    assert.equal(pickLanguage(undefined, 'en;q=0', 'da'), 'da');
    assert.equal(pickLanguage('fr', undefined), 'da');
  });
});

describe('pay page forms', () => {
  it('a field sent twice keeps its first value, as a string; + and percent escapes are decoded', () => {
    assert.deepEqual(formFields('code=ABCD-EFGH&code=XXXX-XXXX&lang=en&email=a%40b.dk&text=to+ord'), {
      code: 'ABCD-EFGH', lang: 'en', email: 'a@b.dk', text: 'to ord',
    });
    assert.deepEqual(formFields(''), {});
  });
});

describe('code look-up limiter', () => {
  it('lets 10 look-ups a minute through per client and refills over time', async () => {
    let now = 0;
    const limiter = new LookupLimiter({ perClientPerMinute: 10, missesPerMinute: 1000 }, () => now);
    for (let i = 0; i < 10; i++) assert.deepEqual(await limiter.take('a'), { allowed: true });
    assert.deepEqual(await limiter.take('a'), { allowed: false, retryAfterSeconds: 6 });
    assert.deepEqual(await limiter.take('b'), { allowed: true }, 'another client is not affected');
    now += 6000;
    assert.deepEqual(await limiter.take('a'), { allowed: true });
  });

  it('stops everyone once the misses of all clients exceed their budget', async () => {
    let now = 0;
    const limiter = new LookupLimiter({ perClientPerMinute: 10, missesPerMinute: 3 }, () => now);
    for (const c of ['a', 'b', 'c']) {
      assert.equal((await limiter.take(c)).allowed, true);
      await limiter.miss();
    }
    assert.deepEqual(await limiter.take('d'), { allowed: false, retryAfterSeconds: 20 });
    now += 20_000;
    assert.equal((await limiter.take('d')).allowed, true);
  });
});

describe('test provider signatures and events', () => {
  const secret = Buffer.alloc(32, 3);
  const body = Buffer.from('{"id":"tevt_1"}');

  it('accepts its own fresh signature over exactly these bytes, and nothing else', () => {
    const t = 1_800_000_000;
    const header = signTestCallback(secret, body, t);
    assert.match(header, /^t=1800000000,v1=[0-9a-f]{64}$/);
    assert.equal(verifyTestSignature(secret, header, body, t), true);
    assert.equal(verifyTestSignature(secret, header, body, t + 300), true);
    assert.equal(verifyTestSignature(secret, header, body, t + 301), false, 'stale');
    assert.equal(verifyTestSignature(secret, header, Buffer.from('{"id":"tevt_2"}'), t), false, 'other bytes');
    assert.equal(verifyTestSignature(Buffer.alloc(32, 4), header, body, t), false, 'other secret');
    assert.equal(verifyTestSignature(secret, undefined, body, t), false);
    assert.equal(verifyTestSignature(secret, `t=${t}`, body, t), false);
    // During a secret rotation the header carries two signatures; either valid one is enough.
    const rotated = `${header},v1=${'a'.repeat(64)}`;
    assert.equal(verifyTestSignature(secret, rotated, body, t), true);
  });

  it('reads payment events into the port\'s terms and refuses malformed ones', () => {
    const event = {
      id: 'tevt_1', type: 'payment.succeeded', created: 1_800_000_000,
      data: { session: 'tcs_1', client_reference: 'ref', payment: 'tpay_1', amount: 12_500, currency: 'DKK', method: 'mobilepay' },
    };
    assert.deepEqual(parseTestEvent(Buffer.from(JSON.stringify(event))), {
      kind: 'payment_succeeded', eventId: 'tevt_1', clientReference: 'ref', providerSessionId: 'tcs_1',
      occurredAt: new Date(1_800_000_000_000), providerPaymentId: 'tpay_1', amountOere: 12_500, currency: 'DKK', method: 'mobilepay',
    });
    assert.deepEqual(parseTestEvent(Buffer.from(JSON.stringify({ ...event, type: 'checkout.expired' }))), { kind: 'ignored', eventId: 'tevt_1', type: 'checkout.expired' });
    for (const bad of [
      'not json',
      JSON.stringify({ ...event, id: '' }),
      JSON.stringify({ ...event, data: { ...event.data, amount: 1.5 } }),
      JSON.stringify({ ...event, data: { ...event.data, method: 'cash' } }),
      JSON.stringify({ ...event, data: { ...event.data, payment: undefined } }),
    ]) {
      assert.throws(() => parseTestEvent(Buffer.from(bad)), InvalidProviderEvent, bad);
    }
  });
});
