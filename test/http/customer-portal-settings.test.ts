import assert from 'node:assert/strict';
import { inProcessOnly, call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { readConfig } from '../../services/shared/config.ts';
import { domainSettings } from '../../services/domains/domain-settings.ts';
import { PALETTES } from '../../contracts/customer-portal.ts';

const BASE = 'https://betal.faktura.test';
const TARGET = 'portal.faktura.test';
const API = 'https://api.faktura.test';
const DEFAULTS = {
  subdomain: null, active: false, subscriptionSelfService: false, primaryColor: null, palette: 'lys',
  customDomain: null, customDomainStatus: 'none', customDomainCheckedAt: null, customDomainFailureReason: null, url: null,
};

describe('customer portal settings: GET/PATCH /v1/customer-portal, POST /v1/customer-portal/verify-domain', () => {
  let t: TestApp;
  let withBase: TestApp;
  let dns: TestDnsServer;
  let n = 0;
  /** Names of their own per test: subdomains and domains are unique across organisations. */
  const sub = () => `kunde-${process.pid}-${++n}`;
  const domain = () => `portal${++n}-${process.pid}.example.dk`;

  const get = (o: TestOrg, app = t) => call(app.app, 'GET', '/v1/customer-portal', { key: o.apiKey });
  const patch = (o: TestOrg, body: unknown, opts: { idempotencyKey?: string; app?: TestApp } = {}) =>
    call((opts.app ?? t).app, 'PATCH', '/v1/customer-portal', { key: o.apiKey, body, ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}) });
  const verify = (o: TestOrg) => call(t.app, 'POST', '/v1/customer-portal/verify-domain', { key: o.apiKey });
  const row = async (o: TestOrg) =>
    (await testDb().db.sql`
      SELECT subdomain, active, subscription_self_service, primary_color, palette, custom_domain, custom_domain_status, custom_domain_failure
      FROM customer_portals WHERE organization_id = ${o.organizationId}`)[0];

  before(async () => {
    dns = await startTestDnsServer();
    const config = readConfig({ DNS_SERVERS: dns.address, PORTAL_CNAME_TARGET: TARGET });
    t = await startTestApp(inProcessOnly({ payBaseUrl: BASE, publicApiUrl: API, domains: domainSettings(config) }));
    withBase = await startTestApp(inProcessOnly({ payBaseUrl: BASE, domains: domainSettings(readConfig({ DNS_SERVERS: dns.address, PORTAL_CNAME_TARGET: TARGET, PORTAL_BASE_DOMAIN: 'Kunde.Faktura.Test' })) }));
  });
  after(async () => {
    await t.close();
    await withBase.close();
    await dns.close();
  });

  it('GET of an organisation that never changed them: the defaults, nothing stored', async () => {
    const org = await createTestOrg();
    const res = await get(org);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { data: DEFAULTS, meta: {} });
    assert.equal(await row(org), undefined);
  });

  it('PATCH changes only the fields sent; GET and the stored row show the result', async () => {
    const org = await createTestOrg();
    const s = sub();
    const first = await patch(org, { subdomain: s, active: true });
    assert.equal(first.status, 200, first.raw);
    assert.deepEqual(first.body, { data: { ...DEFAULTS, subdomain: s, active: true, url: `${BASE}/portal/${s}` }, meta: {} });
    const second = await patch(org, { subscriptionSelfService: true, primaryColor: '#1F4e79', palette: 'midnat' });
    assert.equal(second.status, 200, second.raw);
    const expected = { ...DEFAULTS, subdomain: s, active: true, subscriptionSelfService: true, primaryColor: '#1F4e79', palette: 'midnat', url: `${BASE}/portal/${s}` };
    assert.deepEqual(second.body.data, expected);
    assert.deepEqual((await get(org)).body.data, expected);
    // The columns the portal's pages read (services/pay/portal).
    assert.deepEqual(await row(org), {
      subdomain: s, active: true, subscription_self_service: true, primary_color: '#1F4e79', palette: 'midnat',
      custom_domain: null, custom_domain_status: 'none', custom_domain_failure: null,
    });
    const off = await patch(org, { active: false, primaryColor: null });
    assert.deepEqual(off.body.data, { ...expected, active: false, primaryColor: null });
    // An empty patch changes nothing and answers the settings.
    const empty = await patch(org, {});
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body.data, { ...expected, active: false, primaryColor: null });
  });

  it('every palette of the settings is taken; subdomains of 3 and 40 characters are', async () => {
    const org = await createTestOrg();
    assert.equal(PALETTES.length, 18);
    for (const palette of PALETTES) {
      const res = await patch(org, { palette });
      assert.equal(res.status, 200, `${palette}: ${res.raw}`);
      assert.equal(res.body.data.palette, palette);
    }
    const short = `${(n++ % 36).toString(36)}${process.pid.toString(36).slice(-1)}${(n % 36).toString(36)}`;
    const long = `${process.pid}-${++n}-`.padEnd(39, 'x') + '9';
    for (const s of [short, long, `a-${process.pid}-b`, `a--${process.pid}`]) {
      const res = await patch(org, { subdomain: s });
      assert.equal(res.status, 200, `${s}: ${res.raw}`);
      assert.equal(res.body.data.subdomain, s);
    }
  });

  it('the settings\' bounds: 400 validation_failed with the pointer of the field, nothing stored', async () => {
    const org = await createTestOrg();
    const cases: [Record<string, unknown>, string][] = [
      [{ subdomain: 'ab' }, '/subdomain'],
      [{ subdomain: 'a'.repeat(41) }, '/subdomain'],
      [{ subdomain: '-abc' }, '/subdomain'],
      [{ subdomain: 'abc-' }, '/subdomain'],
      [{ subdomain: 'Kunde' }, '/subdomain'],
      [{ subdomain: 'kunde_a' }, '/subdomain'],
      [{ subdomain: 'kunde.a' }, '/subdomain'],
      [{ subdomain: 'bæk' }, '/subdomain'],
      [{ subdomain: null }, '/subdomain'],
      [{ subdomain: 123 }, '/subdomain'],
      [{ active: 'yes' }, '/active'],
      [{ active: null }, '/active'],
      [{ subscriptionSelfService: 1 }, '/subscriptionSelfService'],
      [{ primaryColor: '#12345' }, '/primaryColor'],
      [{ primaryColor: '#1234567' }, '/primaryColor'],
      [{ primaryColor: '123456' }, '/primaryColor'],
      [{ primaryColor: '#GGGGGG' }, '/primaryColor'],
      [{ primaryColor: 'red' }, '/primaryColor'],
      [{ palette: 'dark' }, '/palette'],
      [{ palette: 'Lys' }, '/palette'],
      [{ palette: null }, '/palette'],
      [{ customDomain: '' }, '/customDomain'],
      [{ customDomain: 'a'.repeat(256) }, '/customDomain'],
      [{ customDomain: 7 }, '/customDomain'],
      [{ url: 'https://x.dk' }, '/url'],
      [{ customDomainStatus: 'verified' }, '/customDomainStatus'],
    ];
    for (const [body, path] of cases) {
      const res = await patch(org, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.raw}`);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), `${JSON.stringify(body)}: ${JSON.stringify(res.body.error.details)}`);
    }
    assert.equal((await call(t.app, 'PATCH', '/v1/customer-portal', { key: org.apiKey, body: { active: false }, idempotencyKey: null })).status, 400);
    assert.equal(await row(org), undefined);
  });

  it("a subdomain another organisation holds (active or not): 409 subdomain_taken; free again once it lets go", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const s = sub();
    assert.equal((await patch(a, { subdomain: s })).status, 200);
    const taken = await patch(b, { subdomain: s, active: true });
    assert.equal(taken.status, 409, taken.raw);
    assert.equal(taken.body.error.code, 'subdomain_taken');
    assert.deepEqual(taken.body.error.details, [{ path: '/subdomain', message: 'is taken' }]);
    assert.deepEqual((await get(b)).body.data, DEFAULTS);
    // The holder may send its own subdomain again.
    const own = await patch(a, { subdomain: s, active: true });
    assert.equal(own.status, 200, own.raw);
    assert.equal((await patch(a, { subdomain: sub() })).status, 200);
    const free = await patch(b, { subdomain: s });
    assert.equal(free.status, 200, free.raw);
    assert.equal(free.body.data.subdomain, s);
  });

  it('two organisations asking for one subdomain at once: one gets it, the other 409 subdomain_taken @cluster', async () => {
    for (let round = 0; round < 3; round++) {
      const [a, b] = [await createTestOrg(), await createTestOrg()];
      const s = sub();
      const answers = await Promise.all([patch(a, { subdomain: s }), patch(b, { subdomain: s })]);
      assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409], answers.map((r) => r.raw).join('\n'));
      assert.equal(answers.find((r) => r.status === 409)!.body.error.code, 'subdomain_taken');
      const [count] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM customer_portals WHERE subdomain = ${s}`;
      assert.equal(count!.n, 1);
    }
  });

  it('active: true without a subdomain after the patch: 422 portal_subdomain_required; with one in the same patch it is fine', async () => {
    const org = await createTestOrg();
    const res = await patch(org, { active: true, palette: 'skov' });
    assert.equal(res.status, 422, res.raw);
    assert.equal(res.body.error.code, 'portal_subdomain_required');
    assert.equal(await row(org), undefined, 'nothing of the refused patch is kept');
    const s = sub();
    const ok = await patch(org, { active: true, subdomain: s });
    assert.equal(ok.status, 200, ok.raw);
    assert.equal(ok.body.data.active, true);
  });

  it('customDomain: stored in lower case as unverified, kept when sent again, none when removed; not a host name: 422 invalid_domain', async () => {
    const org = await createTestOrg();
    const d = domain();
    const set = await patch(org, { customDomain: d.toUpperCase() });
    assert.equal(set.status, 200, set.raw);
    assert.equal(set.body.data.customDomain, d);
    assert.equal(set.body.data.customDomainStatus, 'unverified');
    assert.equal(set.body.data.url, null, 'an unverified custom domain is not the address');
    for (const bad of ['localhost', 'kunde', 'kunde..example.dk', '-kunde.example.dk', 'kunde_1.example.dk', '10.0.0.1', 'https://kunde.example.dk', 'kunde.example.dk/x']) {
      const res = await patch(org, { customDomain: bad });
      assert.equal(res.status, 422, `${bad}: ${res.raw}`);
      assert.equal(res.body.error.code, 'invalid_domain');
      assert.deepEqual(res.body.error.details, [{ path: '/customDomain', message: 'must be a DNS host name with at least one dot' }]);
    }
    assert.equal((await get(org)).body.data.customDomain, d);
    const removed = await patch(org, { customDomain: null });
    assert.equal(removed.body.data.customDomain, null);
    assert.equal(removed.body.data.customDomainStatus, 'none');
    assert.deepEqual((await row(org))!.custom_domain_status, 'none');
  });

  it('verify-domain: a CNAME to PORTAL_CNAME_TARGET verifies it and makes it the url; anything else fails with the reason', async () => {
    const org = await createTestOrg();
    const s = sub();
    const d = domain();
    await patch(org, { subdomain: s, customDomain: d });
    const expectFailed = async (reason: string) => {
      const res = await verify(org);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.data.customDomainStatus, 'failed');
      assert.equal(res.body.data.customDomainFailureReason, reason);
      assert.notEqual(res.body.data.customDomainCheckedAt, null);
      assert.equal(res.body.data.url, `${BASE}/portal/${s}`);
      assert.equal((await row(org))!.custom_domain_failure, reason);
    };
    await expectFailed(`${d} does not exist in DNS (NXDOMAIN).`);
    dns.a(d, '192.0.2.7');
    await expectFailed(`${d} has no CNAME record.`);
    dns.remove(d);
    // Where the name points instead is not repeated: it may name a host of an internal network.
    dns.cname(d, 'db01.corp.example.net');
    await expectFailed(`${d} is not a CNAME to ${TARGET}.`);
    dns.silence(d);
    await expectFailed(`The DNS lookup of ${d} timed out.`);
    dns.remove(d);
    dns.cname(d, `${TARGET.toUpperCase()}.`);
    const before = Date.now();
    const ok = await verify(org);
    assert.equal(ok.status, 200, ok.raw);
    assert.deepEqual({ ...ok.body.data, customDomainCheckedAt: null }, {
      ...DEFAULTS, subdomain: s, customDomain: d, customDomainStatus: 'verified', url: `https://${d}`,
    });
    assert.ok(Date.parse(ok.body.data.customDomainCheckedAt) >= before - 1000);
    assert.ok(dns.queries().includes(`udp CNAME ${d}`));
    assert.deepEqual((await get(org)).body.data, ok.body.data);
    // Sending the same domain keeps the verification; another one starts over and the url goes back to the subdomain.
    assert.equal((await patch(org, { customDomain: d })).body.data.customDomainStatus, 'verified');
    const other = await patch(org, { customDomain: domain() });
    assert.equal(other.body.data.customDomainStatus, 'unverified');
    assert.equal(other.body.data.customDomainCheckedAt, null);
    assert.equal(other.body.data.customDomainFailureReason, null);
    assert.equal(other.body.data.url, `${BASE}/portal/${s}`);
  });

  it('verify-domain with no custom domain: 422 portal_custom_domain_missing; a custom domain another organisation verified stays theirs', async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const missing = await verify(a);
    assert.equal(missing.status, 422, missing.raw);
    assert.equal(missing.body.error.code, 'portal_custom_domain_missing');
    const d = domain();
    dns.cname(d, TARGET);
    await patch(a, { customDomain: d });
    assert.equal((await verify(a)).body.data.customDomainStatus, 'verified');
    await patch(b, { customDomain: d });
    const res = await verify(b);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.customDomainStatus, 'failed');
    assert.equal(res.body.data.customDomainFailureReason, `${d} is verified by another organisation; it can be verified here once that organisation removes it.`);
    assert.equal((await get(a)).body.data.customDomainStatus, 'verified');
    const body = await call(t.app, 'POST', '/v1/customer-portal/verify-domain', { key: a.apiKey, body: { customDomain: d } });
    assert.equal(body.status, 400);
  });

  it('reserved subdomains (the fixed list, and the services\' own hosts under PORTAL_BASE_DOMAIN): 422 subdomain_reserved, nothing changes', async () => {
    const org = await createTestOrg();
    const s = sub();
    assert.equal((await patch(org, { subdomain: s })).status, 200);
    for (const reserved of [
      'www', 'api', 'pay', 'app', 'admin', 'mail', 'smtp', 'portal', 'static', 'assets', 'cdn', 'status', 'help', 'support', 'docs', 'auth',
      'login', 'billing', 'faktura',
    ]) {
      const res = await patch(org, { subdomain: reserved, active: true });
      assert.equal(res.status, 422, `${reserved}: ${res.raw}`);
      assert.equal(res.body.error.code, 'subdomain_reserved');
      assert.deepEqual(res.body.error.details, [{ path: '/subdomain', message: 'is reserved' }]);
    }
    assert.equal((await get(org)).body.data.subdomain, s);
    assert.equal((await row(org))!.active, false);

    // With the pay service at betal-<pid>.<base> and the API at v1.rest-<pid>.<base>, those labels are the services' hosts.
    const payLabel = `betal-${process.pid}`;
    const apiLabel = `rest-${process.pid}`;
    const services = await startTestApp({
      payBaseUrl: `https://${payLabel}.kunde.faktura.test`,
      publicApiUrl: `https://v1.${apiLabel}.kunde.faktura.test/`,
      domains: domainSettings(readConfig({ DNS_SERVERS: dns.address, PORTAL_BASE_DOMAIN: 'kunde.faktura.test' })),
    });
    try {
      for (const label of [payLabel, apiLabel]) {
        const res = await patch(org, { subdomain: label }, { app: services });
        assert.equal(res.status, 422, `${label}: ${res.raw}`);
        assert.equal(res.body.error.code, 'subdomain_reserved');
      }
      // Elsewhere (the services under another name) they are ordinary subdomains.
      const other = await createTestOrg();
      assert.equal((await patch(other, { subdomain: payLabel })).status, 200);
      assert.equal((await patch(other, { subdomain: apiLabel })).status, 200);
      assert.equal((await patch(other, { subdomain: sub() })).status, 200);
    } finally {
      await services.close();
    }
  });

  it("customDomain: internal-only zones, the services' own hosts and names under PORTAL_BASE_DOMAIN are 422 invalid_domain", async () => {
    const org = await createTestOrg();
    const d = domain();
    assert.equal((await patch(org, { customDomain: d })).status, 200);
    const zone = 'must not be in an internal-only zone';
    const own = 'is an address of the service itself';
    for (const [name, detail, app] of [
      ['kunde.internal', zone], ['kunde.local', zone], ['kunde.localhost', zone], ['kunde.corp', zone], ['kunde.home.arpa', zone],
      ['kunde.lan', zone], ['kunde.intranet', zone],
      ['betal.faktura.test', own], ['API.faktura.test', own], [TARGET, own],
      ['acme.kunde.faktura.test', "must not be under the customer portal's own domain", withBase],
      ['kunde.faktura.test', "must not be under the customer portal's own domain", withBase],
    ] as const) {
      const res = await patch(org, { customDomain: name }, { app: app ?? t });
      assert.equal(res.status, 422, `${name}: ${res.raw}`);
      assert.equal(res.body.error.code, 'invalid_domain');
      assert.deepEqual(res.body.error.details, [{ path: '/customDomain', message: detail }], name);
    }
    const internal = await patch(org, { customDomain: 'Kunde.Corp' });
    assert.equal(internal.body.error.message, 'kunde.corp is in the internal-only zone .corp, which is not reachable from the internet.');
    assert.equal((await get(org)).body.data.customDomain, d);
  });

  it("customDomain: any organisation's payment domain (its own too, set or verified) is 409 domain_in_use; verify fails for one set meanwhile", async () => {
    const org = await createTestOrg();
    const other = await createTestOrg();
    const paymentDomain = (o: TestOrg, name: string | null) => call(t.app, 'PUT', '/v1/payment-domain', { key: o.apiKey, body: { domain: name } });
    const theirs = domain();
    const mine = domain();
    assert.equal((await paymentDomain(other, theirs)).status, 200);
    assert.equal((await paymentDomain(org, mine)).status, 200);
    const kept = domain();
    assert.equal((await patch(org, { customDomain: kept })).status, 200);
    for (const name of [theirs, mine.toUpperCase()]) {
      const res = await patch(org, { customDomain: name, palette: 'skov' });
      assert.equal(res.status, 409, `${name}: ${res.raw}`);
      assert.equal(res.body.error.code, 'domain_in_use');
      assert.equal(res.body.error.message, `${name.toLowerCase()} is in use as a payment domain; a portal's custom domain needs a name of its own.`);
      assert.deepEqual(res.body.error.details, [{ path: '/customDomain', message: 'is in use as a payment domain' }]);
    }
    const unchanged = (await row(org))!;
    assert.equal(unchanged.custom_domain, kept);
    assert.equal(unchanged.palette, 'lys', 'nothing of the refused patch is kept');
    await paymentDomain(other, null);
    assert.equal((await patch(org, { customDomain: theirs })).status, 200);

    // Set by another organisation as its payment domain at the same moment (the state if nothing serialised the two):
    // the CNAME is right, yet the check fails and says why.
    const raced = domain();
    dns.cname(raced, TARGET);
    assert.equal((await patch(org, { customDomain: raced })).status, 200);
    await testDb().db.sql`
      INSERT INTO payment_domains (organization_id, domain, status, verification_value) VALUES (${other.organizationId}, ${raced}, 'unverified', 'x')
      ON CONFLICT (organization_id) DO UPDATE SET domain = EXCLUDED.domain, status = EXCLUDED.status`;
    const res = await verify(org);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.customDomainStatus, 'failed');
    assert.equal(res.body.data.customDomainFailureReason, `${raced} is in use as a payment domain; a portal's custom domain needs a name of its own.`);
    assert.equal((await row(org))!.custom_domain_status, 'failed');
    // Once the payment domain lets go of it, the CNAME verifies it.
    await paymentDomain(other, null);
    assert.equal((await verify(org)).body.data.customDomainStatus, 'verified');
  });

  it('verify-domain: a custom domain set before PORTAL_BASE_DOMAIN covered it fails there with the reason', async () => {
    const org = await createTestOrg();
    const name = `p${++n}-${process.pid}.kunde.faktura.test`;
    dns.cname(name, TARGET);
    assert.equal((await patch(org, { customDomain: name })).status, 200);
    const res = await call(withBase.app, 'POST', '/v1/customer-portal/verify-domain', { key: org.apiKey });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.customDomainStatus, 'failed');
    assert.equal(res.body.data.customDomainFailureReason, `${name} is under the customer portal's own domain kunde.faktura.test.`);
    assert.equal((await verify(org)).body.data.customDomainStatus, 'verified');
  });

  it('with PORTAL_BASE_DOMAIN the url is https://<subdomain>.<base domain>', async () => {
    const org = await createTestOrg();
    const s = sub();
    const res = await patch(org, { subdomain: s }, { app: withBase });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.url, `https://${s}.kunde.faktura.test`);
    assert.equal((await get(org, withBase)).body.data.url, `https://${s}.kunde.faktura.test`);
  });

  it('replays: the same Idempotency-Key answers the first PATCH again; a different body is 409 idempotency_conflict', async () => {
    const org = await createTestOrg();
    const key = `portal-${Date.now()}`;
    const s = sub();
    const first = await patch(org, { subdomain: s }, { idempotencyKey: key });
    await patch(org, { palette: 'vin' });
    const again = await patch(org, { subdomain: s }, { idempotencyKey: key });
    assert.equal(again.status, 200);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body, { data: first.body.data, meta: { replayed: true } });
    const conflict = await patch(org, { subdomain: sub() }, { idempotencyKey: key });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');
  });

  it('scopes: GET needs settings:read, PATCH and verify-domain need settings:write (403 insufficient_scope)', async () => {
    const org = await createTestOrg();
    const readOnly = await createTestKey(org, ['settings:read']);
    assert.equal((await call(t.app, 'GET', '/v1/customer-portal', { key: readOnly })).status, 200);
    for (const [method, url, body] of [['PATCH', '/v1/customer-portal', { active: false }], ['POST', '/v1/customer-portal/verify-domain', undefined]] as const) {
      const res = await call(t.app, method, url, { key: readOnly, body });
      assert.equal(res.status, 403, res.raw);
      assert.equal(res.body.error.code, 'insufficient_scope');
      assert.match(JSON.stringify(res.body.error.details), /settings:write/);
    }
    const none = await call(t.app, 'GET', '/v1/customer-portal', { key: await createTestKey(org, ['customers:read']) });
    assert.equal(none.status, 403);
    assert.equal(none.body.error.code, 'insufficient_scope');
    assert.equal((await call(t.app, 'GET', '/v1/customer-portal')).status, 401);
    assert.equal(await row(org), undefined);
  });

  it('tenant isolation: each organisation sees and changes only its own portal', async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const s = sub();
    const mine = (await patch(a, { subdomain: s, active: true, palette: 'rosa' })).body.data;
    assert.deepEqual((await get(b)).body.data, DEFAULTS);
    await patch(b, { palette: 'grafit', subscriptionSelfService: true });
    assert.deepEqual((await get(a)).body.data, mine);
  });
});
