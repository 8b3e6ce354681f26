import assert from 'node:assert/strict';
import { EVENT_TYPES } from '../../contracts/events.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { inProcessOnly, call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/** Names an injected resolver answers for, to play DNS without the network. */
const DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'v6.example.com': ['2606:4700::1111'],
  'db.example.com': ['10.0.0.5'],
  'meta.example.com': ['169.254.169.254'],
  'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
  'ula.example.com': ['fd00::1'],
  'mapped.example.com': ['::ffff:192.168.1.1'],
};
const resolve = async (host: string): Promise<string[]> => {
  const hit = DNS[host];
  if (!hit) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
  return hit;
};

const ENDPOINT_KEYS = ['active', 'createdAt', 'description', 'eventTypes', 'id', 'updatedAt', 'url'];

describe('webhook endpoints', () => {
  let t: TestApp;
  let loopback: TestApp;
  let org: TestOrg;

  before(async () => {
    t = await startTestApp(inProcessOnly({ webhooks: { allowLoopback: false, resolve } }));
    loopback = await startTestApp(inProcessOnly({ webhooks: { allowLoopback: true, resolve } }));
    org = await createTestOrg();
  });
  after(async () => {
    await t.close();
    await loopback.close();
  });

  const create = (o: TestOrg, body: Record<string, unknown>, app: TestApp = t) => call(app.app, 'POST', '/v1/webhook-endpoints', { key: o.apiKey, body });

  it('registers an endpoint: 201, Location, the secret once, encrypted at rest', async () => {
    const res = await create(org, { url: 'https://hooks.example.com/faktura', eventTypes: ['invoice.issued', 'payment.received'], description: 'ERP' });
    assert.equal(res.status, 201);
    const ep = res.body.data;
    assert.deepEqual(Object.keys(ep).sort(), [...ENDPOINT_KEYS, 'secret'].sort());
    assert.equal(res.headers.location, `/v1/webhook-endpoints/${ep.id}`);
    assert.deepEqual(
      { url: ep.url, eventTypes: ep.eventTypes, description: ep.description, active: ep.active },
      { url: 'https://hooks.example.com/faktura', eventTypes: ['invoice.issued', 'payment.received'], description: 'ERP', active: true },
    );
    assert.match(ep.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const [row] = await testDb().db.sql<{ secret_enc: Buffer }[]>`SELECT secret_enc FROM webhook_endpoints WHERE id = ${ep.id}`;
    assert.ok(!row!.secret_enc.toString('latin1').includes(ep.secret.slice(6)), 'the secret is not stored in the clear');

    const read = await call(t.app, 'GET', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey });
    assert.equal(read.status, 200);
    assert.deepEqual(Object.keys(read.body.data).sort(), ENDPOINT_KEYS);
    const list = await call(t.app, 'GET', '/v1/webhook-endpoints', { key: org.apiKey });
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((e: { id: string }) => e.id === ep.id));
    for (const e of list.body.data) assert.equal(e.secret, undefined, 'a list never shows secrets');
    assert.equal(list.body.meta.nextCursor, null);
  });

  it('lists newest first with cursor pagination like every list', async () => {
    const o = await createTestOrg();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create(o, { url: `https://hooks.example.com/l${i}`, eventTypes: ['invoice.paid'] })).body.data.id);
    const p1 = await call(t.app, 'GET', '/v1/webhook-endpoints?limit=2', { key: o.apiKey });
    assert.deepEqual(p1.body.data.map((e: { id: string }) => e.id), [ids[2], ids[1]]);
    const p2 = await call(t.app, 'GET', `/v1/webhook-endpoints?limit=2&cursor=${encodeURIComponent(p1.body.meta.nextCursor)}`, { key: o.apiKey });
    assert.deepEqual(p2.body.data.map((e: { id: string }) => e.id), [ids[0]]);
    assert.equal(p2.body.meta.nextCursor, null);
    const other = await createTestOrg();
    const foreign = await call(t.app, 'GET', `/v1/webhook-endpoints?cursor=${encodeURIComponent(p1.body.meta.nextCursor)}`, { key: other.apiKey });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 'invalid_cursor');
    assert.equal((await call(t.app, 'GET', '/v1/webhook-endpoints?limit=0', { key: o.apiKey })).status, 400);
  });

  it('replays a creation with the same Idempotency-Key, secret included, without a second endpoint', async () => {
    const o = await createTestOrg();
    const body = { url: 'https://hooks.example.com/once', eventTypes: ['invoice.paid'] };
    const first = await call(t.app, 'POST', '/v1/webhook-endpoints', { key: o.apiKey, body, idempotencyKey: 'create-endpoint-1' });
    const again = await call(t.app, 'POST', '/v1/webhook-endpoints', { key: o.apiKey, body, idempotencyKey: 'create-endpoint-1' });
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.data.secret, first.body.data.secret);
    const list = await call(t.app, 'GET', '/v1/webhook-endpoints', { key: o.apiKey });
    assert.equal(list.body.data.length, 1);
  });

  it('accepts every one of the catalogue event types (its size, 34, is the bound), and refuses anything else with 400', async () => {
    assert.equal(EVENT_TYPES.length, 34);
    const all = await create(org, { url: 'https://hooks.example.com/all', eventTypes: [...EVENT_TYPES] });
    assert.equal(all.status, 201);
    assert.deepEqual(all.body.data.eventTypes, [...EVENT_TYPES]);
    const reminders = await create(org, { url: 'https://hooks.example.com/reminders', eventTypes: ['reminder.sent', 'reminder.failed'] });
    assert.equal(reminders.status, 201, reminders.raw);
    const bad: [string, unknown][] = [
      ['an unknown type', ['invoice.issued', 'invoice.deleted']],
      ['a wildcard', ['*']],
      ['no types', []],
      ['a duplicate', ['invoice.issued', 'invoice.issued']],
      ['more than the catalogue, one repeated', [...EVENT_TYPES, 'invoice.issued']],
      ['more than the catalogue, one unknown', [...EVENT_TYPES, 'reminder.opened']],
      ['an unknown reminder type', ['reminder.delivered']],
      ['not an array', 'invoice.issued'],
    ];
    for (const [what, eventTypes] of bad) {
      const res = await create(org, { url: 'https://hooks.example.com/x', eventTypes });
      assert.equal(res.status, 400, what);
      assert.equal(res.body.error.code, 'validation_failed', what);
    }
  });

  it('bounds url (1..500) and description (200), and refuses unknown properties', async () => {
    const cases: Record<string, unknown>[] = [
      { url: '', eventTypes: ['invoice.paid'] },
      { url: `https://hooks.example.com/${'a'.repeat(480)}`, eventTypes: ['invoice.paid'] },
      { url: 'https://hooks.example.com/', eventTypes: ['invoice.paid'], description: 'd'.repeat(201) },
      { url: 'https://hooks.example.com/', eventTypes: ['invoice.paid'], secret: 'whsec_mine' },
      { eventTypes: ['invoice.paid'] },
      { url: 'https://hooks.example.com/' },
    ];
    for (const body of cases) {
      const res = await create(org, body);
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(res.body.error.code, 'validation_failed');
    }
    const edge = await create(org, { url: `https://hooks.example.com/${'a'.repeat(474)}`, eventTypes: ['invoice.paid'], description: 'd'.repeat(200) });
    assert.equal(edge.status, 201);
    assert.equal(edge.body.data.url.length, 500);
  });

  describe('URL rules (SSRF)', () => {
    const rejected: [string, string][] = [
      ['http://hooks.example.com/', 'plain http'],
      ['ftp://hooks.example.com/', 'another scheme'],
      ['https://user:pass@hooks.example.com/', 'credentials'],
      ['https://user@hooks.example.com/', 'a user name'],
      ['not a url', 'unparsable'],
      ['https://localhost/hook', 'localhost'],
      ['https://LOCALHOST./hook', 'localhost with a trailing dot'],
      ['https://api.localhost/hook', 'a .localhost name'],
      ['https://127.0.0.1/hook', 'IPv4 loopback'],
      ['https://127.0.0.1./hook', 'IPv4 loopback with a trailing dot'],
      ['https://2130706433/hook', 'decimal IPv4 loopback'],
      ['https://017700000001/hook', 'octal IPv4 loopback'],
      ['https://0x7f.1/hook', 'hexadecimal short IPv4 loopback'],
      ['https://127.1/hook', 'short IPv4 loopback'],
      ['https://%31%32%37.0.0.1/hook', 'percent-encoded IPv4 loopback'],
      ['https://0.0.0.0/hook', 'the unspecified address'],
      ['https://0/hook', 'zero'],
      ['https://10.0.0.1/hook', 'private 10/8'],
      ['https://172.16.5.4/hook', 'private 172.16/12'],
      ['https://192.168.1.1/hook', 'private 192.168/16'],
      ['https://100.64.0.1/hook', 'CGNAT'],
      ['https://169.254.169.254/latest/meta-data', 'cloud metadata'],
      ['https://168.63.129.16/', 'Azure metadata'],
      ['https://224.0.0.1/', 'multicast'],
      ['https://255.255.255.255/', 'broadcast'],
      ['https://[::1]/hook', 'IPv6 loopback'],
      ['https://[::]/hook', 'IPv6 unspecified'],
      ['https://[::ffff:127.0.0.1]/hook', 'IPv4-mapped loopback'],
      ['https://[::ffff:a9fe:a9fe]/hook', 'IPv4-mapped metadata'],
      ['https://[64:ff9b::a00:1]/hook', 'NAT64 of a private address'],
      ['https://[2002:c0a8:101::1]/hook', '6to4 of a private address'],
      ['https://[fd00:ec2::254]/hook', 'unique-local (AWS metadata over IPv6)'],
      ['https://[fe80::1]/hook', 'IPv6 link-local'],
      ['https://[ff02::1]/hook', 'IPv6 multicast'],
      ['https://intranet/hook', 'a single-label name'],
      ['https://metadata.google.internal/computeMetadata/v1/', 'an .internal name'],
      ['https://printer.local/', 'an mDNS name'],
      ['https://db.example.com/hook', 'a name resolving to a private address'],
      ['https://meta.example.com/hook', 'a name resolving to the metadata address'],
      ['https://mixed.example.com/hook', 'a name with one loopback address among public ones'],
      ['https://ula.example.com/hook', 'a name resolving to a unique-local address'],
      ['https://mapped.example.com/hook', 'a name resolving to an IPv4-mapped private address'],
    ];
    for (const [url, what] of rejected) {
      it(`422 webhook_url_rejected for ${what}: ${url}`, async () => {
        const res = await create(org, { url, eventTypes: ['invoice.issued'] });
        assert.equal(res.status, 422);
        assert.equal(res.body.error.code, 'webhook_url_rejected');
        assert.equal(res.body.error.details[0].path, '/url');
      });
    }

    it('accepts public HTTPS destinations: names, IPv4, IPv6, any port, and names that do not resolve yet', async () => {
      for (const url of [
        'https://hooks.example.com/a?b=c',
        'https://v6.example.com:8443/hook',
        'https://93.184.216.34/hook',
        'https://[2606:4700::1111]/hook',
        'https://not-registered-yet.example.org/hook',
      ]) {
        const o = await createTestOrg();
        const res = await create(o, { url, eventTypes: ['invoice.issued'] });
        assert.equal(res.status, 201, url);
        assert.equal(res.body.data.url, url);
      }
    });

    it('with WEBHOOK_ALLOW_LOOPBACK, allows loopback receivers (http too), and nothing else inward', async () => {
      const o = await createTestOrg();
      for (const url of ['http://127.0.0.1:4000/hook', 'http://localhost:4000/hook', 'https://[::1]:4000/hook', 'http://2130706433:4000/']) {
        const res = await create(o, { url, eventTypes: ['invoice.issued'] }, loopback);
        assert.equal(res.status, 201, url);
      }
      for (const url of ['http://10.0.0.1/hook', 'https://169.254.169.254/', 'http://hooks.example.com/', 'https://db.example.com/']) {
        const res = await create(o, { url, eventTypes: ['invoice.issued'] }, loopback);
        assert.equal(res.status, 422, url);
        assert.equal(res.body.error.code, 'webhook_url_rejected');
      }
    });
  });

  it('limits an organisation to 10 endpoints (422 webhook_endpoint_limit); a deletion frees a place', async () => {
    const o = await createTestOrg();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await create(o, { url: `https://hooks.example.com/${i}`, eventTypes: ['invoice.paid'] })).body.data.id);
    const over = await create(o, { url: 'https://hooks.example.com/11', eventTypes: ['invoice.paid'] });
    assert.equal(over.status, 422);
    assert.equal(over.body.error.code, 'webhook_endpoint_limit');
    const [n] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = ${o.organizationId}`;
    assert.equal(n!.n, 10);
    assert.equal((await call(t.app, 'DELETE', `/v1/webhook-endpoints/${ids[0]}`, { key: o.apiKey })).status, 204);
    assert.equal((await create(o, { url: 'https://hooks.example.com/11', eventTypes: ['invoice.paid'] })).status, 201);
  });

  it('holds the limit under concurrent creations @cluster', async () => {
    const o = await createTestOrg();
    const results = await Promise.all(
      Array.from({ length: 14 }, (_, i) => create(o, { url: `https://hooks.example.com/c${i}`, eventTypes: ['invoice.paid'] })),
    );
    assert.equal(results.filter((r) => r.status === 201).length, 10);
    assert.equal(results.filter((r) => r.status === 422 && r.body.error.code === 'webhook_endpoint_limit').length, 4);
  });

  it('PATCH changes event types, description and active; url cannot change; {} changes nothing', async () => {
    const ep = (await create(org, { url: 'https://hooks.example.com/p', eventTypes: ['invoice.paid'] })).body.data;
    const res = await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, {
      key: org.apiKey,
      body: { eventTypes: ['invoice.sent', 'customer.past_due'], description: 'Nyt', active: false },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(
      { eventTypes: res.body.data.eventTypes, description: res.body.data.description, active: res.body.data.active, url: res.body.data.url },
      { eventTypes: ['invoice.sent', 'customer.past_due'], description: 'Nyt', active: false, url: ep.url },
    );
    const url = await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body: { url: 'https://hooks.example.com/other' } });
    assert.equal(url.status, 400);
    assert.equal(url.body.error.code, 'validation_failed');
    const clear = await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body: { description: null } });
    assert.equal(clear.body.data.description, null);
    const none = await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body: {} });
    assert.equal(none.status, 200);
    assert.deepEqual(none.body.data.eventTypes, ['invoice.sent', 'customer.past_due']);
    for (const body of [{ eventTypes: [] }, { eventTypes: ['nope'] }, { active: 'yes' }]) {
      const bad = await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body });
      assert.equal(bad.status, 400);
    }
  });

  it('rotates the secret: a new one, shown once; the previous one kept for 24 hours', async () => {
    const ep = (await create(org, { url: 'https://hooks.example.com/r', eventTypes: ['invoice.paid'] })).body.data;
    const res = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key: org.apiKey });
    assert.equal(res.status, 200);
    assert.match(res.body.data.secret, /^whsec_/);
    assert.notEqual(res.body.data.secret, ep.secret);
    assert.equal(res.body.data.id, ep.id);
    const [row] = await testDb().db.sql<{ previous: boolean; hours: number }[]>`
      SELECT previous_secret_enc IS NOT NULL AS previous,
             round(extract(epoch FROM previous_secret_expires_at - now()) / 3600)::int AS hours
      FROM webhook_endpoints WHERE id = ${ep.id}`;
    assert.deepEqual({ ...row }, { previous: true, hours: 24 });
    const read = await call(t.app, 'GET', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey });
    assert.equal(read.body.data.secret, undefined);

    // A second rotation inside the window keeps only the secret it replaces: the original one stops signing.
    const again = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key: org.apiKey });
    assert.equal(again.status, 200);
    const [secrets] = await testDb().db.sql<{ secret_enc: Buffer; previous_secret_enc: Buffer }[]>`
      SELECT secret_enc, previous_secret_enc FROM webhook_endpoints WHERE id = ${ep.id}`;
    const current = t.deps.keyring.decrypt(secrets!.secret_enc);
    const previous = t.deps.keyring.decrypt(secrets!.previous_secret_enc);
    assert.ok(current.includes(again.body.data.secret.slice(6)), 'the new secret signs');
    assert.ok(previous.includes(res.body.data.secret.slice(6)), 'the one it replaced still signs');
    assert.ok(!previous.includes(ep.secret.slice(6)) && !current.includes(ep.secret.slice(6)), 'the original no longer signs');
  });

  it('queues a test ping (202) with no real data; an inactive endpoint’s ping is queued too (202) and waits for its activation', async () => {
    const ep = (await create(org, { url: 'https://hooks.example.com/ping', eventTypes: ['invoice.paid'] })).body.data;
    const res = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey });
    assert.equal(res.status, 202);
    const ping = res.body.data;
    assert.deepEqual(Object.keys(ping), ['id', 'type', 'timestamp', 'organizationId', 'data']);
    assert.deepEqual({ type: ping.type, organizationId: ping.organizationId, data: ping.data }, { type: 'webhook.ping', organizationId: org.organizationId, data: {} });
    const rows = await testDb().db.sql<{ status: string; message_id: string; event_id: string | null }[]>`
      SELECT status, message_id, event_id FROM webhook_deliveries WHERE endpoint_id = ${ep.id}`;
    assert.deepEqual(rows.map((r) => ({ ...r })), [{ status: 'queued', message_id: ping.id, event_id: null }]);
    const [wake] = await testDb().db.sql`SELECT 1 FROM wake_index w JOIN webhook_deliveries d ON d.id::text = w.key WHERE d.endpoint_id = ${ep.id}`;
    assert.ok(wake, 'the ping waits in the wake index');
    const [feed] = await testDb().db.sql`SELECT 1 FROM events WHERE id = ${ping.id}`;
    assert.equal(feed, undefined, 'a ping is not an event of the log');

    await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body: { active: false } });
    const inactive = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey });
    assert.equal(inactive.status, 202);
    assert.equal(inactive.body.data.type, 'webhook.ping');
    const queued = await testDb().db.sql<{ message_id: string }[]>`
      SELECT message_id FROM webhook_deliveries WHERE endpoint_id = ${ep.id} AND status = 'queued' ORDER BY created_at`;
    assert.deepEqual(queued.map((r) => r.message_id), [ping.id, inactive.body.data.id]);
  });

  it('DELETE is final (204, then 404) and its queued deliveries disappear', async () => {
    const ep = (await create(org, { url: 'https://hooks.example.com/d', eventTypes: ['invoice.paid'] })).body.data;
    await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey });
    const del = await call(t.app, 'DELETE', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey });
    assert.equal(del.status, 204);
    assert.equal(del.raw, '');
    assert.equal((await call(t.app, 'GET', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey })).status, 404);
    const again = await call(t.app, 'DELETE', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey });
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'webhook_endpoint_not_found');
    const [n] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${ep.id}`;
    assert.equal(n!.n, 0);
    const [w] = await testDb().db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM wake_index WHERE organization_id = ${org.organizationId}
        AND key NOT IN (SELECT id::text FROM webhook_deliveries)`;
    assert.equal(w!.n, 0, 'no wake-up is left for a vanished delivery');
  });

  it('answers the same neutral 404 for unknown, malformed and foreign ids on every endpoint route', async () => {
    const other = await createTestOrg();
    const foreign = (await create(other, { url: 'https://hooks.example.com/f', eventTypes: ['invoice.paid'] })).body.data.id;
    for (const id of [foreign, uuidv7(), 'not-a-uuid']) {
      const routes: [string, string, unknown][] = [
        ['GET', '', undefined],
        ['PATCH', '', { active: false }],
        ['DELETE', '', undefined],
        ['POST', '/rotate-secret', undefined],
        ['POST', '/test', undefined],
        ['POST', '/replay', { since: '2026-01-01' }],
      ];
      for (const [method, suffix, body] of routes) {
        const res = await call(t.app, method, `/v1/webhook-endpoints/${id}${suffix}`, { key: org.apiKey, body });
        assert.equal(res.status, 404, `${method} ${suffix} ${id}`);
        assert.equal(res.body.error.code, 'webhook_endpoint_not_found');
      }
    }
    const still = await call(t.app, 'GET', `/v1/webhook-endpoints/${foreign}`, { key: other.apiKey });
    assert.equal(still.body.data.active, true, 'nothing happened to the other organisation’s endpoint');
  });

  it('requires webhooks:manage on every route', async () => {
    const key = await createTestKey(org, ['events:read', 'invoices:write']);
    const id = uuidv7();
    for (const [method, url] of [
      ['GET', '/v1/webhook-endpoints'],
      ['POST', '/v1/webhook-endpoints'],
      ['GET', `/v1/webhook-endpoints/${id}`],
      ['PATCH', `/v1/webhook-endpoints/${id}`],
      ['DELETE', `/v1/webhook-endpoints/${id}`],
      ['POST', `/v1/webhook-endpoints/${id}/rotate-secret`],
      ['POST', `/v1/webhook-endpoints/${id}/test`],
      ['POST', `/v1/webhook-endpoints/${id}/replay`],
    ] as const) {
      const res = await call(t.app, method, url, { key });
      assert.equal(res.status, 403, `${method} ${url}`);
      assert.equal(res.body.error.code, 'insufficient_scope');
      assert.deepEqual(res.body.error.details, [{ path: '', message: 'required scope: webhooks:manage' }]);
    }
  });
});
