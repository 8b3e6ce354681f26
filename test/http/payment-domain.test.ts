import assert from 'node:assert/strict';
import { inProcessOnly, call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestDnsServer, type TestDnsServer } from '../helpers/dns-server.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';
import { readConfig } from '../../services/shared/config.ts';
import { domainSettings } from '../../services/domains/domain-settings.ts';
import { loadReminderView } from '../../services/reminders/reminder-document.ts';
import { insertReminder, issueInvoice } from '../helpers/reminders.ts';

const BASE = 'https://betal.faktura.test';
const API = 'https://API.faktura.test/';
const PORTAL_BASE = 'kunde.faktura.test';
const PORTAL_TARGET = 'portal.faktura.test';
const NONE = { domain: null, status: 'none', verification: null, checkedAt: null, failureReason: null };
const line = { description: 'Konsulentydelse', quantity: 1, unitPriceOere: 12_500, vatRateBps: 0, vatExemptionReason: 'ML13' };

describe('payment domain: GET/PUT /v1/payment-domain, POST /v1/payment-domain/verify (live DNS on loopback)', () => {
  let t: TestApp;
  /** The API without PORTAL_BASE_DOMAIN: names under it can be set there (as before the base domain was configured). */
  let plain: TestApp;
  let dns: TestDnsServer;
  let pay: TestPay;
  /** The pay service behind a trusted proxy (PAY_TRUST_PROXY): the host is X-Forwarded-Host. */
  let proxied: TestPay;
  let n = 0;
  /** A domain of its own per test: DNS records and the one-organisation rule never leak between tests. */
  const fresh = () => `betal${++n}-${process.pid}.example.dk`;

  const get = (o: TestOrg) => call(t.app, 'GET', '/v1/payment-domain', { key: o.apiKey });
  const put = (o: TestOrg, domain: unknown, opts: { idempotencyKey?: string } = {}) =>
    call(t.app, 'PUT', '/v1/payment-domain', { key: o.apiKey, body: { domain }, ...opts });
  const verify = (o: TestOrg) => call(t.app, 'POST', '/v1/payment-domain/verify', { key: o.apiKey });
  const row = async (o: TestOrg) =>
    (await testDb().db.sql<{ domain: string | null; status: string; checked_at: Date | null; failure_reason: string | null }[]>`
      SELECT domain, status, checked_at, failure_reason FROM payment_domains WHERE organization_id = ${o.organizationId}`)[0];
  const issuedInvoice = async (o: TestOrg) => {
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: o.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: o.apiKey, body: { customerId, lines: [line] } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data.id as string;
  };
  const link = async (o: TestOrg, invoiceId: string) => {
    const res = await call(t.app, 'POST', `/v1/invoices/${invoiceId}/payment-link`, { key: o.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body.data as { url: string; reference: string };
  };
  /** Sets the domain, publishes the organisation's value and verifies it. */
  const verified = async (o: TestOrg, domain = fresh()) => {
    const set = await put(o, domain);
    assert.equal(set.status, 200, set.raw);
    dns.txt(set.body.data.verification.name, set.body.data.verification.value);
    const res = await verify(o);
    assert.equal(res.body.data.status, 'verified', res.raw);
    return { domain, value: set.body.data.verification.value as string };
  };

  before(async () => {
    dns = await startTestDnsServer();
    // The API as `npm start` builds it from its environment: DNS_SERVERS names the loopback server.
    const config = readConfig({ DNS_SERVERS: dns.address, PORTAL_BASE_DOMAIN: PORTAL_BASE, PORTAL_CNAME_TARGET: PORTAL_TARGET });
    assert.deepEqual(config.dnsServers, [dns.address]);
    t = await startTestApp(inProcessOnly({ payBaseUrl: BASE, publicApiUrl: API, domains: domainSettings(config) }));
    plain = await startTestApp(inProcessOnly({ payBaseUrl: BASE, domains: domainSettings(readConfig({ DNS_SERVERS: dns.address })) }));
    pay = await startTestPay(inProcessOnly({ payBaseUrl: BASE, portal: { keyring: testDb().keyring } }));
    proxied = await startTestPay(inProcessOnly({ payBaseUrl: BASE, trustProxy: true }));
  });
  after(async () => {
    await pay.close();
    await proxied.close();
    await plain.close();
    await t.close();
    await dns.close();
  });

  it('GET of an organisation that never set one: status none, no verification record, nothing stored', async () => {
    const org = await createTestOrg();
    const res = await get(org);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { data: NONE, meta: {} });
    assert.equal(await row(org), undefined);
  });

  it('PUT stores the name in lower case, unverified, with the TXT record to publish; GET shows the same', async () => {
    const org = await createTestOrg();
    const domain = fresh();
    const res = await put(org, `${domain.toUpperCase()}.`);
    assert.equal(res.status, 200, res.raw);
    const data = res.body.data;
    assert.deepEqual(Object.keys(data).sort(), ['checkedAt', 'domain', 'failureReason', 'status', 'verification']);
    assert.equal(data.domain, domain);
    assert.equal(data.status, 'unverified');
    assert.equal(data.checkedAt, null);
    assert.equal(data.failureReason, null);
    assert.deepEqual(Object.keys(data.verification).sort(), ['name', 'type', 'value']);
    assert.equal(data.verification.type, 'TXT');
    assert.equal(data.verification.name, `_faktura-verify.${domain}`);
    assert.match(data.verification.value, /^faktura-verify=[0-9a-f]{32}$/);
    assert.deepEqual(res.body.meta, {});
    assert.deepEqual((await get(org)).body, { data, meta: {} });
    assert.deepEqual(await row(org), { domain, status: 'unverified', checked_at: null, failure_reason: null });
  });

  it('PUT null clears it (none); the organisation keeps its value for the next domain, and each organisation has its own', async () => {
    const org = await createTestOrg();
    const first = (await put(org, fresh())).body.data;
    const cleared = await put(org, null);
    assert.equal(cleared.status, 200, cleared.raw);
    assert.deepEqual(cleared.body.data, NONE);
    assert.deepEqual(await row(org), { domain: null, status: 'none', checked_at: null, failure_reason: null });
    const second = (await put(org, fresh())).body.data;
    assert.equal(second.verification.value, first.verification.value);
    const other = (await put(await createTestOrg(), fresh())).body.data;
    assert.notEqual(other.verification.value, first.verification.value);
    // Clearing when nothing is set is a 200 with status none too.
    const empty = await put(await createTestOrg(), null);
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body.data, NONE);
  });

  it('a name that is not a DNS host name with at least one dot: 422 invalid_domain, nothing changes', async () => {
    const org = await createTestOrg();
    const kept = (await put(org, fresh())).body.data;
    const label63 = 'a'.repeat(63);
    for (const bad of [
      'localhost', 'example', '-betal.example.dk', 'betal-.example.dk', 'betal..example.dk', '.example.dk', 'betal.example.dk..',
      'betal example.dk', ' betal.example.dk', 'betal_1.example.dk', '192.168.1.10', 'https://betal.example.dk', 'betal.example.dk/p',
      'betal.example.dk:443', 'blåbær.dk', '*.example.dk', `${'a'.repeat(64)}.dk`, `${[label63, label63, label63, 'a'.repeat(59)].join('.')}.dk`,
    ]) {
      const res = await put(org, bad);
      assert.equal(res.status, 422, `${bad}: ${res.raw}`);
      assert.equal(res.body.error.code, 'invalid_domain');
      assert.deepEqual(res.body.error.details, [{ path: '/domain', message: 'must be a DNS host name with at least one dot' }]);
    }
    assert.deepEqual((await get(org)).body.data, kept);
    // The longest names that are host names: 63-character labels, 253 characters in all.
    for (const good of [`${label63}.dk`, `${[label63, label63, label63, 'a'.repeat(57)].join('.')}.dk`, 'xn--blbr-roa.dk', '3com.dk']) {
      const res = await put(org, good);
      assert.equal(res.status, 200, `${good}: ${res.raw}`);
      assert.equal(res.body.data.domain, good);
    }
  });

  it('the body: domain is required, a string of 1..255 characters or null (400 validation_failed with pointers)', async () => {
    const org = await createTestOrg();
    for (const [body, path] of [
      [{}, '/domain'], [{ domain: '' }, '/domain'], [{ domain: 'a'.repeat(256) }, '/domain'], [{ domain: 42 }, '/domain'],
      [{ domain: 'betal.example.dk', verified: true }, '/verified'],
    ] as const) {
      const res = await call(t.app, 'PUT', '/v1/payment-domain', { key: org.apiKey, body });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.raw}`);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), JSON.stringify(res.body.error.details));
    }
    // 255 characters passes the schema and is judged as a name: longer than DNS allows.
    const long = await put(org, `${'a.'.repeat(126)}dk.`);
    assert.equal(long.status, 422);
    assert.equal(long.body.error.code, 'invalid_domain');
    assert.equal((await call(t.app, 'PUT', '/v1/payment-domain', { key: org.apiKey, body: { domain: 'x.dk' }, idempotencyKey: null })).status, 400);
    assert.equal(await row(org), undefined);
  });

  it('verify with the value published: verified, checkedAt set; the TXT record was asked for just now', async () => {
    const org = await createTestOrg();
    const domain = fresh();
    const set = (await put(org, domain)).body.data;
    dns.txt(set.verification.name, 'v=spf1 -all', set.verification.value);
    const before = Date.now();
    const res = await verify(org);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.status, 'verified');
    assert.equal(res.body.data.failureReason, null);
    assert.ok(Date.parse(res.body.data.checkedAt) >= before - 1000);
    assert.deepEqual({ ...res.body.data, checkedAt: null }, { ...set, status: 'verified' });
    assert.ok(dns.queries().includes(`udp TXT _faktura-verify.${domain}`));
    assert.deepEqual((await get(org)).body.data, res.body.data);
    assert.equal((await row(org))!.status, 'verified');
  });

  it('verify fails for real, with the reason: no such name, no TXT record, another value, no answer, a failing server', async () => {
    const org = await createTestOrg();
    const domain = fresh();
    const name = `_faktura-verify.${domain}`;
    const set = (await put(org, domain)).body.data;
    const expectFailed = async (reason: string) => {
      const res = await verify(org);
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.data.status, 'failed');
      assert.equal(res.body.data.failureReason, reason);
      assert.notEqual(res.body.data.checkedAt, null);
      assert.equal((await row(org))!.failure_reason, reason);
    };
    await expectFailed(`${name} does not exist in DNS (NXDOMAIN).`);
    dns.a(name, '192.0.2.1');
    await expectFailed(`No TXT record found at ${name}.`);
    // The reason never repeats what the record holds instead: that is DNS data, not the organisation's to read here.
    dns.txt(name, 'faktura-verify=00000000000000000000000000000000', 'internal-token=s3cr3t');
    await expectFailed(`${name} has no TXT record with the expected value.`);
    dns.silence(name);
    await expectFailed(`The DNS lookup of ${name} timed out.`);
    dns.remove(name);
    dns.fail(name);
    await expectFailed(`The DNS server failed to answer for ${name} (SERVFAIL).`);
    // Published at last: the next check verifies it and forgets the reason.
    dns.remove(name);
    dns.txt(name, set.verification.value);
    const ok = await verify(org);
    assert.equal(ok.body.data.status, 'verified');
    assert.equal(ok.body.data.failureReason, null);
    // A verified domain whose record is taken away fails on the next check.
    dns.remove(name);
    await expectFailed(`${name} does not exist in DNS (NXDOMAIN).`);
  });

  it('a TXT answer too large for UDP: the resolver asks again over TCP and the domain is verified', async () => {
    const org = await createTestOrg();
    const domain = fresh();
    const name = `_faktura-verify.${domain}`;
    const set = (await put(org, domain)).body.data;
    dns.txt(name, ...Array.from({ length: 8 }, (_, i) => `google-site-verification=${String(i).repeat(43)}`), set.verification.value);
    dns.tcpOnly(name);
    const res = await verify(org);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.status, 'verified', res.raw);
    const asked = dns.queries().filter((q) => q.endsWith(`TXT ${name}`));
    assert.deepEqual(asked, [`udp TXT ${name}`, `tcp TXT ${name}`]);
  });

  it('names in internal-only zones, the services\' own hosts and names under PORTAL_BASE_DOMAIN: 422 invalid_domain with the reason', async () => {
    const org = await createTestOrg();
    const kept = (await put(org, fresh())).body.data;
    const zone = 'must not be in an internal-only zone';
    const own = 'is an address of the service itself';
    const portal = "must not be under the customer portal's own domain";
    for (const [name, detail, message] of [
      ['pay.internal', zone, 'pay.internal is in the internal-only zone .internal, which is not reachable from the internet.'],
      ['nas.local', zone], ['app.localhost', zone], ['fileserver.corp', zone], ['router.home.arpa', zone], ['printer.LAN', zone],
      ['wiki.intranet', zone], ['a.b.internal', zone],
      ['betal.faktura.test', own, 'betal.faktura.test is an address of the service itself.'], ['api.faktura.test.', own], [PORTAL_TARGET, own],
      [PORTAL_BASE, portal, `${PORTAL_BASE} is under the customer portal's own domain ${PORTAL_BASE}.`], [`acme.${PORTAL_BASE}`, portal],
      [`x.y.${PORTAL_BASE.toUpperCase()}`, portal],
    ] as const) {
      const res = await put(org, name);
      assert.equal(res.status, 422, `${name}: ${res.raw}`);
      assert.equal(res.body.error.code, 'invalid_domain');
      assert.deepEqual(res.body.error.details, [{ path: '/domain', message: detail }], name);
      if (message) assert.equal(res.body.error.message, message);
    }
    assert.deepEqual((await get(org)).body.data, kept);
    // Near names are fine: the zone or host must match whole labels.
    for (const good of [`betal${n}-${process.pid}.faktura.test`, `pay${n}-${process.pid}.internal.example.dk`, `x${n}-${process.pid}.notkunde.faktura.test`]) {
      const res = await put(org, good);
      assert.equal(res.status, 200, `${good}: ${res.raw}`);
    }
  });

  it("a name that is any organisation's portal custom domain (its own too, set or verified): 409 domain_in_use, nothing changes", async () => {
    const org = await createTestOrg();
    const other = await createTestOrg();
    const kept = (await put(org, fresh())).body.data;
    const portalDomain = (o: TestOrg, customDomain: string | null) => call(t.app, 'PATCH', '/v1/customer-portal', { key: o.apiKey, body: { customDomain } });
    const theirs = fresh();
    assert.equal((await portalDomain(other, theirs)).status, 200);
    const mine = fresh();
    assert.equal((await portalDomain(org, mine)).status, 200);
    for (const name of [theirs.toUpperCase(), mine]) {
      const res = await put(org, name);
      assert.equal(res.status, 409, `${name}: ${res.raw}`);
      assert.equal(res.body.error.code, 'domain_in_use');
      assert.equal(res.body.error.message, `${name.toLowerCase()} is in use as a customer portal's custom domain; a payment domain needs a name of its own.`);
      assert.deepEqual(res.body.error.details, [{ path: '/domain', message: "is in use as a customer portal's custom domain" }]);
    }
    assert.deepEqual((await get(org)).body.data, kept);
    assert.deepEqual(await row(org), { domain: kept.domain, status: 'unverified', checked_at: null, failure_reason: null });
    // Once the portal lets go of the name it is free for a payment domain.
    await portalDomain(other, null);
    assert.equal((await put(org, theirs)).status, 200);
  });

  it('a payment domain and a portal custom domain set at the same moment for one name: one is taken, the other 409 domain_in_use', async () => {
    for (let i = 0; i < 3; i++) {
      const a = await createTestOrg();
      const b = await createTestOrg();
      const name = fresh();
      const [ra, rb] = await Promise.all([
        put(a, name),
        call(t.app, 'PATCH', '/v1/customer-portal', { key: b.apiKey, body: { customDomain: name } }),
      ]);
      assert.deepEqual([ra.status, rb.status].sort(), [200, 409], `${ra.raw} ${rb.raw}`);
      assert.equal((ra.status === 409 ? ra : rb).body.error.code, 'domain_in_use');
      const [held] = await testDb().db.sql<{ n: number }[]>`
        SELECT (SELECT count(*) FROM payment_domains WHERE domain = ${name})::int + (SELECT count(*) FROM customer_portals WHERE custom_domain = ${name})::int AS n`;
      assert.equal(held!.n, 1);
    }
  });

  it('verify: a name that is (meanwhile) a portal custom domain or under PORTAL_BASE_DOMAIN fails with the reason, whatever DNS says', async () => {
    const org = await createTestOrg();
    const other = await createTestOrg();
    const domain = fresh();
    const set = (await put(org, domain)).body.data;
    dns.txt(set.verification.name, set.verification.value);
    // What two organisations setting the name at once would leave if nothing serialised them (and rows from before the rule).
    await testDb().db.sql`
      INSERT INTO customer_portals (organization_id, custom_domain, custom_domain_status) VALUES (${other.organizationId}, ${domain}, 'unverified')`;
    const res = await verify(org);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.status, 'failed');
    const reason = `${domain} is in use as a customer portal's custom domain; a payment domain needs a name of its own.`;
    assert.equal(res.body.data.failureReason, reason);
    assert.equal((await row(org))!.failure_reason, reason);
    await testDb().db.sql`UPDATE customer_portals SET custom_domain = NULL, custom_domain_status = 'none' WHERE organization_id = ${other.organizationId}`;
    assert.equal((await verify(org)).body.data.status, 'verified');

    // Set where the base domain was not configured yet, verified where it is.
    const under = `p${++n}-${process.pid}.${PORTAL_BASE}`;
    const late = await call(plain.app, 'PUT', '/v1/payment-domain', { key: org.apiKey, body: { domain: under } });
    assert.equal(late.status, 200, late.raw);
    dns.txt(late.body.data.verification.name, late.body.data.verification.value);
    const refused = await verify(org);
    assert.equal(refused.body.data.status, 'failed');
    assert.equal(refused.body.data.failureReason, `${under} is under the customer portal's own domain ${PORTAL_BASE}.`);
    assert.equal((await call(plain.app, 'POST', '/v1/payment-domain/verify', { key: org.apiKey })).body.data.status, 'verified');
  });

  it('verify with no domain set: 422 payment_domain_missing (also after clearing it), and nothing is looked up', async () => {
    const org = await createTestOrg();
    const res = await verify(org);
    assert.equal(res.status, 422, res.raw);
    assert.equal(res.body.error.code, 'payment_domain_missing');
    await put(org, fresh());
    await put(org, null);
    const queries = dns.queries().length;
    const again = await verify(org);
    assert.equal(again.status, 422);
    assert.equal(again.body.error.code, 'payment_domain_missing');
    assert.equal(dns.queries().length, queries);
    // No body is taken.
    const body = await call(t.app, 'POST', '/v1/payment-domain/verify', { key: org.apiKey, body: { domain: 'x.dk' } });
    assert.equal(body.status, 400);
    assert.equal(body.body.error.code, 'validation_failed');
  });

  it('the same domain again keeps its verification; another domain starts over as unverified', async () => {
    const org = await createTestOrg();
    const { domain } = await verified(org);
    const verifiedState = (await get(org)).body.data;
    const same = await put(org, domain.toUpperCase());
    assert.equal(same.status, 200);
    assert.deepEqual(same.body.data, verifiedState);
    const other = fresh();
    const changed = await put(org, other);
    assert.deepEqual(changed.body.data, {
      domain: other, status: 'unverified', checkedAt: null, failureReason: null,
      verification: { type: 'TXT', name: `_faktura-verify.${other}`, value: verifiedState.verification.value },
    });
  });

  it('a domain another organisation has verified stays theirs: the check fails and says so', async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const { domain, value } = await verified(a);
    const setB = (await put(b, domain)).body.data;
    // Even with both values published, the domain stays with the organisation that verified it first.
    dns.txt(`_faktura-verify.${domain}`, value, setB.verification.value);
    const res = await verify(b);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.data.status, 'failed');
    assert.equal(res.body.data.failureReason, `${domain} is verified by another organisation; it can be verified here once that organisation removes it.`);
    assert.equal((await get(a)).body.data.status, 'verified');
    // Once the first organisation lets go of it, the second can verify it.
    await put(a, null);
    assert.equal((await verify(b)).body.data.status, 'verified');
  });

  it('concurrent verifications of one domain by two organisations: exactly one is verified', async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const domain = fresh();
    const va = (await put(a, domain)).body.data.verification.value;
    const vb = (await put(b, domain)).body.data.verification.value;
    dns.txt(`_faktura-verify.${domain}`, va, vb);
    const [ra, rb] = await Promise.all([verify(a), verify(b)]);
    assert.equal(ra.status, 200, ra.raw);
    assert.equal(rb.status, 200, rb.raw);
    assert.deepEqual([ra.body.data.status, rb.body.data.status].sort(), ['failed', 'verified']);
    const [count] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM payment_domains WHERE domain = ${domain} AND status = 'verified'`;
    assert.equal(count!.n, 1);
  });

  it('replays: the same Idempotency-Key answers the first PUT again @cluster', async () => {
    const org = await createTestOrg();
    const key = `pd-${Date.now()}`;
    const domain = fresh();
    const first = await put(org, domain, { idempotencyKey: key });
    const second = await put(org, domain, { idempotencyKey: key });
    assert.equal(second.status, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.body, { data: first.body.data, meta: { replayed: true } });
    const conflict = await put(org, fresh(), { idempotencyKey: key });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');
  });

  it('scopes: GET needs settings:read, PUT and verify need settings:write (403 insufficient_scope)', async () => {
    const org = await createTestOrg();
    const readOnly = await createTestKey(org, ['settings:read']);
    assert.equal((await call(t.app, 'GET', '/v1/payment-domain', { key: readOnly })).status, 200);
    for (const [method, url, body] of [['PUT', '/v1/payment-domain', { domain: 'x.example.dk' }], ['POST', '/v1/payment-domain/verify', undefined]] as const) {
      const res = await call(t.app, method, url, { key: readOnly, body });
      assert.equal(res.status, 403, res.raw);
      assert.equal(res.body.error.code, 'insufficient_scope');
      assert.match(JSON.stringify(res.body.error.details), /settings:write/);
    }
    const none = await call(t.app, 'GET', '/v1/payment-domain', { key: await createTestKey(org, ['invoices:read']) });
    assert.equal(none.status, 403);
    assert.equal(none.body.error.code, 'insufficient_scope');
    assert.equal((await call(t.app, 'GET', '/v1/payment-domain')).status, 401);
    assert.equal(await row(org), undefined);
  });

  it("tenant isolation: each organisation sees and changes only its own domain", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    const { domain } = await verified(a);
    assert.deepEqual((await get(b)).body.data, NONE);
    const vb = await verify(b);
    assert.equal(vb.status, 422);
    assert.equal(vb.body.error.code, 'payment_domain_missing');
    await put(b, fresh());
    const still = (await get(a)).body.data;
    assert.equal(still.domain, domain);
    assert.equal(still.status, 'verified');
  });

  it("payment links: only a verified domain changes their url to https://<domain>/<reference>; other organisations' links keep the pay base", async () => {
    const org = await createTestOrg();
    const other = await createTestOrg();
    const invoiceId = await issuedInvoice(org);
    const before = await link(org, invoiceId);
    assert.equal(before.url, `${BASE}/p/${before.reference}`);
    const domain = fresh();
    const set = (await put(org, domain)).body.data;
    assert.equal((await link(org, invoiceId)).url, `${BASE}/p/${before.reference}`, 'unverified: unchanged');
    await verify(org);
    assert.equal((await link(org, invoiceId)).url, `${BASE}/p/${before.reference}`, 'failed: unchanged');
    dns.txt(set.verification.name, set.verification.value);
    assert.equal((await verify(org)).body.data.status, 'verified');
    const after = await link(org, invoiceId);
    assert.deepEqual(after, { ...before, url: `https://${domain}/${before.reference}` });
    const read = await call(t.app, 'GET', `/v1/invoices/${invoiceId}/payment-link`, { key: org.apiKey });
    assert.equal(read.body.data.url, `https://${domain}/${before.reference}`);
    // A link created after verification is on the domain from the start.
    const second = await link(org, await issuedInvoice(org));
    assert.equal(second.url, `https://${domain}/${second.reference}`);
    const foreign = await link(other, await issuedInvoice(other));
    assert.equal(foreign.url, `${BASE}/p/${foreign.reference}`);
    // Another domain (unverified) takes links back to the pay base.
    await put(org, fresh());
    assert.equal((await link(org, invoiceId)).url, `${BASE}/p/${before.reference}`);
  });

  it('the reminder document prints the link on the verified domain', async () => {
    const org = await createTestOrg();
    const inv = await issueInvoice(t, org, { type: 'company', name: 'Rykker A/S' }, 50_000);
    const { reference } = await link(org, inv.invoiceId);
    const reminderId = await insertReminder(org, inv, { type: 'payment_reminder', sentOn: '2025-12-04', deadline: '2025-12-14' });
    const { db, keyring } = testDb();
    const view = () => db.read((sql) => loadReminderView(sql, keyring, org.organizationId, reminderId, { payBaseUrl: BASE }));
    assert.equal((await view())?.paymentLink?.url, `${BASE}/p/${reference}`);
    const { domain } = await verified(org);
    assert.equal((await view())?.paymentLink?.url, `https://${domain}/${reference}`);
    await put(org, null);
    assert.equal((await view())?.paymentLink?.url, `${BASE}/p/${reference}`);
  });

  it('the pay service answers GET /<reference> on a verified payment domain with the invoice\'s pay page', async () => {
    const org = await createTestOrg({ name: 'Domæne ApS' });
    const other = await createTestOrg();
    const invoiceId = await issuedInvoice(org);
    const { reference } = await link(org, invoiceId);
    const { domain } = await verified(org);
    const foreignRef = (await link(other, await issuedInvoice(other))).reference;

    const res = await pay.app.inject({ method: 'GET', url: `/${reference}?lang=en`, headers: { host: `${domain.toUpperCase()}` } });
    assert.equal(res.statusCode, 302, res.body);
    assert.equal(res.headers.location, `/p/${reference}?lang=en`);
    assert.equal(res.headers['cache-control'], 'no-store');
    const withPort = await pay.app.inject({ method: 'GET', url: `/${reference}`, headers: { host: `${domain}:443` } });
    assert.equal(withPort.statusCode, 302);
    assert.equal(withPort.headers.location, `/p/${reference}`);
    const page = await pay.app.inject({ method: 'GET', url: String(res.headers.location), headers: { host: domain } });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Domæne ApS/);

    // Not on the pay base's own host, not for another organisation's link, not on an unverified domain.
    for (const [host, ref] of [['betal.faktura.test', reference], [domain, foreignRef], [domain, 'f'.repeat(32)]] as const) {
      const notFound = await pay.app.inject({ method: 'GET', url: `/${ref}`, headers: { host } });
      assert.equal(notFound.statusCode, 404, `${host} ${ref}`);
      assert.match(notFound.headers['content-type'] as string, /text\/html/);
    }
    await put(org, fresh());
    const unverified = await pay.app.inject({ method: 'GET', url: `/${reference}`, headers: { host: domain } });
    assert.equal(unverified.statusCode, 404);
    // The request line in the log never shows the reference.
    assert.ok(!pay.logs().includes(reference), 'reference in the pay log');
  });
  it("on a verified payment domain only that organisation's pay pages are served: the rest of the pay service is not found there", async () => {
    const org = await createTestOrg({ name: 'Eget Domæne ApS' });
    const other = await createTestOrg();
    const { reference } = await link(org, await issuedInvoice(org));
    const foreignRef = (await link(other, await issuedInvoice(other))).reference;
    const { domain } = await verified(org);
    const subdomain = `pd-${process.pid}-${++n}`;
    const portal = await call(t.app, 'PATCH', '/v1/customer-portal', { key: org.apiKey, body: { subdomain, active: true } });
    assert.equal(portal.status, 200, portal.raw);
    const on = (host: string, method: 'GET' | 'POST', url: string, form?: string, app = pay) =>
      app.app.inject({ method, url, headers: { host, ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) }, payload: form });

    // A checkout opened on the pay service's own host: its provider page is there.
    const checkout = await on(domain, 'POST', `/p/${reference}/checkout`, 'method=card&lang=da');
    assert.equal(checkout.statusCode, 303, checkout.body);
    const providerPage = new URL(String(checkout.headers.location));
    assert.equal(providerPage.origin, BASE);
    assert.match(providerPage.pathname, /^\/test-provider\/checkout\//);
    const providerPath = `${providerPage.pathname}${providerPage.search}`;

    // On the pay service's host, everything is there.
    for (const url of ['/', '/healthz', `/p/${foreignRef}`, `/portal/${subdomain}`, providerPath, '/assets/pay.css']) {
      const res = await on('betal.faktura.test', 'GET', url);
      assert.equal(res.statusCode, 200, `pay host ${url}: ${res.statusCode}`);
    }
    // On the payment domain: the organisation's own link, its pay page and the page's style sheet.
    assert.equal((await on(domain, 'GET', `/${reference}`)).statusCode, 302);
    const page = await on(domain, 'GET', `/p/${reference}?lang=en`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Eget Domæne ApS/);
    assert.equal((await on(domain, 'GET', '/assets/pay.css')).statusCode, 200);
    // Its return page is routed (and answers not found only for an unknown session, as on the pay host).
    const ret = await on(domain, 'GET', `/p/${reference}/return?session=x`);
    assert.equal(ret.statusCode, 404);
    assert.equal(ret.statusCode, (await on('betal.faktura.test', 'GET', `/p/${reference}/return?session=x`)).statusCode);

    // Everything else is the not-found page.
    for (const [method, url, form] of [
      ['GET', '/'], ['GET', '/healthz'], ['POST', '/code', 'code=ABCD-EFGH'], ['GET', `/p/${foreignRef}`], ['GET', `/p/${foreignRef}/`],
      ['POST', `/p/${foreignRef}/checkout`, 'method=card'], ['GET', `/p/${foreignRef}/return?session=x`], ['GET', `/${foreignRef}`],
      ['GET', `/portal/${subdomain}`], ['GET', `/portal/${subdomain}/`], ['GET', providerPath], ['POST', `/${reference}`, ''],
      ['GET', `/p/${reference}/other`], ['GET', '/assets/../healthz'], ['GET', `/p/${reference.toUpperCase()}`],
    ] as const) {
      const res = await on(domain, method, url, form);
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      assert.match(res.headers['content-type'] as string, /text\/html/, url);
    }
    const callback = await on(domain, 'POST', '/callbacks/test', '');
    assert.equal(callback.statusCode, 404);
    assert.equal(JSON.parse(callback.body).error.code, 'route_not_found');

    // The host is X-Forwarded-Host only behind a trusted proxy.
    const forwarded = { host: 'betal.faktura.test', 'x-forwarded-host': domain };
    assert.equal((await pay.app.inject({ method: 'GET', url: '/healthz', headers: forwarded })).statusCode, 200);
    assert.equal((await proxied.app.inject({ method: 'GET', url: '/healthz', headers: forwarded })).statusCode, 404);
    assert.equal((await proxied.app.inject({ method: 'GET', url: `/p/${reference}`, headers: forwarded })).statusCode, 200);
    // Once the domain is no longer verified, its host is an ordinary one again.
    await put(org, fresh());
    assert.equal((await on(domain, 'GET', '/healthz')).statusCode, 200);
  });
});
