import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { postWebhook } from '../../activities/webhooks/post-webhook.ts';
import { BUSINESS_CLOCK as CLOCK_SERVICE } from '../../services/clock/wakeups.ts';
import { WEBHOOK_EVENTS as EVENTS_SERVICE } from '../../services/events/restate-event-forwarder.ts';
import { sinceInstant, uuidv7Floor } from '../../services/events/since.ts';
import { readConfig } from '../../services/shared/config.ts';
import { WEBHOOK_DELIVERY_SERVICE } from '../../services/webhooks/delivery-store.ts';
import { afterAttempt, MAX_ATTEMPTS, RETRY_SCHEDULE_MS } from '../../services/webhooks/retry-policy.ts';
import { newSigningSecret, signatureHeader } from '../../services/webhooks/signing.ts';
import { addressVerdict } from '../../services/webhooks/url-policy.ts';
import { BUSINESS_CLOCK } from '../../workflows/business-clock.ts';
import { WEBHOOK_DELIVERY } from '../../workflows/webhook-delivery.ts';
import { WEBHOOK_EVENTS } from '../../workflows/webhook-events.ts';

describe('webhook signatures (Standard Webhooks)', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = newSigningSecret();
    assert.match(a, /^whsec_/);
    assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
    assert.notEqual(a, newSigningSecret());
  });

  it('signs exactly as the standardwebhooks library verifies, with one or two secrets', () => {
    const current = newSigningSecret();
    const previous = newSigningSecret();
    const id = '01900000-0000-7000-8000-000000000001';
    const ts = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ id, type: 'invoice.paid', data: { amountOere: 12500, note: 'æøå "quoted"' } });
    for (const secrets of [[current], [current, previous]]) {
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signatureHeader(secrets, id, ts, body) };
      for (const s of secrets) assert.deepEqual(new Webhook(s).verify(body, headers), JSON.parse(body));
      assert.throws(() => new Webhook(newSigningSecret()).verify(body, headers), /No matching signature/);
      assert.throws(() => new Webhook(current).verify(`${body} `, headers), /No matching signature/);
    }
    assert.equal(signatureHeader([current], id, ts, body), new Webhook(current).sign(id, new Date(ts * 1000), body));
  });
});

describe('webhook address rules', () => {
  const strict = { allowLoopback: false };
  const table: [string, string | null][] = [
    ['93.184.216.34', null],
    ['1.1.1.1', null],
    ['2606:4700::1111', null],
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['0.0.0.0', 'an unspecified ("this network") address'],
    ['::', 'an unspecified address'],
    ['10.255.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['172.32.0.1', null],
    ['192.168.0.1', 'a private address'],
    ['100.64.0.1', 'a shared (CGNAT) address'],
    ['100.127.255.255', 'a shared (CGNAT) address'],
    ['100.128.0.1', null],
    ['169.254.169.254', 'a link-local or cloud-metadata address'],
    ['168.63.129.16', 'a cloud-metadata address'],
    ['224.0.0.251', 'a multicast address'],
    ['255.255.255.255', 'a reserved or broadcast address'],
    ['198.18.0.1', 'a benchmarking address'],
    ['::ffff:10.0.0.1', 'a private address'],
    ['::ffff:a00:1', 'a private address'],
    ['::ffff:8.8.8.8', null],
    ['64:ff9b::7f00:1', 'a loopback address'],
    ['2002:7f00:1::', 'a loopback address'],
    ['2001:0:4136:e378::1', 'a Teredo address'],
    ['2001:db8::1', 'a documentation address'],
    ['fc00::1', 'a unique-local address'],
    ['fd12:3456::1', 'a unique-local address'],
    ['fe80::1', 'a link-local address'],
    ['fec0::1', 'a site-local address'],
    ['ff02::1', 'a multicast address'],
    ['::7f00:1', 'an IPv4-compatible address'],
    ['100::1', 'a reserved address'],
    ['not-an-ip', 'not an IP address'],
  ];
  for (const [address, verdict] of table) {
    it(`${address}: ${verdict ?? 'allowed'}`, () => assert.equal(addressVerdict(address, strict), verdict));
  }

  it('WEBHOOK_ALLOW_LOOPBACK lifts loopback only', () => {
    const loose = { allowLoopback: true };
    for (const a of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) assert.equal(addressVerdict(a, loose), null, a);
    for (const a of ['10.0.0.1', '169.254.169.254', 'fd00::1', '0.0.0.0']) assert.notEqual(addressVerdict(a, loose), null, a);
  });
});

describe('WEBHOOK_ALLOW_LOOPBACK setting', () => {
  it('is off by default, on with "true", and refused in production', () => {
    assert.equal(readConfig({}).webhookAllowLoopback, false);
    assert.equal(readConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true' }).webhookAllowLoopback, true);
    assert.equal(readConfig({ WEBHOOK_ALLOW_LOOPBACK: 'false', NODE_ENV: 'production' }).webhookAllowLoopback, false);
    assert.throws(() => readConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true', NODE_ENV: 'production' }), /not allowed with NODE_ENV=production/);
    assert.throws(() => readConfig({ WEBHOOK_ALLOW_LOOPBACK: 'yes' }), /must be true or false/);
  });
});

describe('event time helpers', () => {
  it('reads a since date as midnight in Copenhagen, winter and summer, and a date-time as given', () => {
    assert.equal(sinceInstant('2026-01-15').toISOString(), '2026-01-14T23:00:00.000Z');
    assert.equal(sinceInstant('2026-07-15').toISOString(), '2026-07-14T22:00:00.000Z');
    assert.equal(sinceInstant('2026-03-29').toISOString(), '2026-03-28T23:00:00.000Z'); // the spring-forward day
    assert.equal(sinceInstant('2026-10-25').toISOString(), '2026-10-24T22:00:00.000Z'); // the fall-back day
    assert.equal(sinceInstant('2026-01-15T10:00:00+02:00').toISOString(), '2026-01-15T08:00:00.000Z');
  });

  it('bounds UUIDv7 ids from below by their time', () => {
    const ms = Date.UTC(2026, 0, 1);
    assert.equal(uuidv7Floor(ms), `${ms.toString(16).padStart(12, '0').slice(0, 8)}-${ms.toString(16).padStart(12, '0').slice(8)}-0000-0000-000000000000`);
  });
});

describe('retry schedule and engine names', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h and gives up after the eighth attempt', () => {
    assert.deepEqual([...RETRY_SCHEDULE_MS], [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6]);
    assert.equal(MAX_ATTEMPTS, 8);
  });

  it('moves a delivery by its attempt: delivered on success, failed with the next wait, given up after the eighth', () => {
    assert.deepEqual(afterAttempt(1, true), { status: 'delivered', waitMs: null });
    assert.deepEqual(afterAttempt(1, false), { status: 'failed', waitMs: 5_000 });
    assert.deepEqual(afterAttempt(7, false), { status: 'failed', waitMs: 36e6 });
    assert.deepEqual(afterAttempt(8, false), { status: 'given-up', waitMs: null });
  });

  it('names the Restate services the same on both sides', () => {
    assert.equal(WEBHOOK_DELIVERY, WEBHOOK_DELIVERY_SERVICE);
    assert.equal(WEBHOOK_EVENTS, EVENTS_SERVICE);
    assert.equal(BUSINESS_CLOCK, CLOCK_SERVICE);
  });
});

describe('webhook POST', () => {
  let server: Server;
  let port = 0;
  let hits: { url: string; body: string }[] = [];
  let answer: (url: string) => { status: number; headers?: Record<string, string> } | 'hang' = () => ({ status: 204 });
  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hits.push({ url: req.url ?? '', body: Buffer.concat(chunks).toString() });
        const a = answer(req.url ?? '');
        if (a === 'hang') return;
        res.writeHead(a.status, a.headers ?? {});
        res.end('ignored');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  beforeEach(() => {
    hits = [];
    answer = () => ({ status: 204 });
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const loose = { allowLoopback: true };
  const post = (url: string, opts: Parameters<typeof postWebhook>[3] = { policy: loose }) => postWebhook(url, { 'webhook-id': 'x' }, '{"a":1}', opts);

  it('counts a 2xx as success and anything else as a failure with its status', async () => {
    const ok = await post(`http://127.0.0.1:${port}/ok`);
    assert.deepEqual({ ...ok, durationMs: 0 }, { statusCode: 204, durationMs: 0, error: null, succeeded: true });
    assert.deepEqual(hits, [{ url: '/ok', body: '{"a":1}' }]);
    answer = () => ({ status: 500 });
    const bad = await post(`http://127.0.0.1:${port}/bad`);
    assert.deepEqual({ ...bad, durationMs: 0 }, { statusCode: 500, durationMs: 0, error: 'HTTP 500', succeeded: false });
  });

  it('does not follow redirects: a 3xx is a failure and the target is never called', async () => {
    answer = (url) => (url === '/moved' ? { status: 302, headers: { location: `http://127.0.0.1:${port}/target` } } : { status: 200 });
    const res = await post(`http://127.0.0.1:${port}/moved`);
    assert.equal(res.statusCode, 302);
    assert.equal(res.succeeded, false);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(hits.map((h) => h.url), ['/moved']);
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    answer = () => 'hang';
    const res = await post(`http://127.0.0.1:${port}/slow`, { policy: loose, timeoutMs: 300 });
    assert.equal(res.succeeded, false);
    assert.equal(res.statusCode, null);
    assert.match(res.error!, /no response within/);
    assert.ok(res.durationMs >= 290 && res.durationMs < 2000);
  });

  it('checks the address it actually connects to: a name that now resolves inward (DNS rebinding) reaches nothing', async () => {
    const rebinding = async () => ['127.0.0.1'];
    // Registered while the name pointed outward; at delivery it answers with loopback.
    const refused = await post(`https://hooks.example.com:${port}/x`, { policy: { allowLoopback: false }, resolve: rebinding });
    assert.equal(refused.succeeded, false);
    assert.equal(refused.error, 'refused: hooks.example.com resolves to a loopback address (127.0.0.1)');
    const privateName = await post(`http://hooks.example.com:${port}/x`, { policy: loose, resolve: async () => ['10.0.0.7'] });
    assert.match(privateName.error!, /refused: hooks\.example\.com resolves to a private address/);
    const mixed = await post(`http://hooks.example.com:${port}/x`, { policy: loose, resolve: async () => ['127.0.0.1', '169.254.169.254'] });
    assert.match(mixed.error!, /refused/);
    const literal = await post(`https://169.254.169.254/latest/meta-data`, { policy: loose });
    assert.match(literal.error!, /refused: the URL points to a link-local or cloud-metadata address/);
    assert.equal(hits.length, 0, 'no request reached the server');
    // The same name, resolving to loopback where the operator allows it, is delivered to that checked address.
    const allowed = await post(`http://hooks.example.com:${port}/ok`, { policy: loose, resolve: rebinding });
    assert.equal(allowed.succeeded, true);
    assert.equal(hits.length, 1);
  });

  it('refuses plain http and loopback without WEBHOOK_ALLOW_LOOPBACK, before connecting', async () => {
    const res = await post(`http://127.0.0.1:${port}/x`, { policy: { allowLoopback: false } });
    assert.match(res.error!, /refused/);
    assert.equal(hits.length, 0);
  });
});
