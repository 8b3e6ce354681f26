import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { call, createTestOrg, startTestApp, testDb, type CallOptions, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';
import { sha256 } from '../../services/shared/crypto.ts';
import type { EngineClient } from '../../services/shared/engine-client.ts';
import type { WorkTarget } from '../../contracts/workflows.ts';
import { confirmTokenOf } from '../../services/pay/portal/portal-tokens.ts';

/**
 * The customer portal's pages on the pay service, in-process (inject): which portal answers, the sign-in link's
 * rules (neutral answer, one-time, expiry, rate limits), what a session may see, CSRF and self-service, and the
 * portal's own host. The mail itself goes out through the PortalSignInMail workflow: test/e2e/customer-portal.test.ts
 * follows it through a real SMTP server; here the link's token is read back from its encrypted column.
 */
describe('customer portal pages', function () {
  this.timeout(60_000);
  const db = { get sql() { return testDb().db.sql; } };
  const keyring = { decrypt: (b: Buffer) => testDb().keyring.decrypt(b) };
  let api: TestApp;
  let pay: TestPay;
  let org: TestOrg;
  let other: TestOrg;
  let customerId: string;
  let otherCustomerId: string;
  let ownInvoice: { id: string; number: number };
  let otherInvoice: { id: string };
  let foreignInvoice: { id: string };
  let subscriptionId: string;
  // Subdomains of this run's own (the suite shares one database): the portal, another organisation's, one nobody has.
  const run = Date.now().toString(36);
  const SUB = `bager-${run}`;
  const OTHER = `anden-${run}`;
  const NOBODY = `findes-ikke-${run}`;
  const EMAIL = 'bogholderi@kunde.dk';
  let ip = 0;
  // Each test asks from an address of its own, so the per-client limit is the one test's business.
  const freshIp = () => `10.0.${Math.floor(++ip / 250)}.${ip % 250}`;

  const apiCall = (method: string, url: string, opts: CallOptions = {}, o: TestOrg = org) => call(api.app, method, url, { key: o.apiKey, ...opts });
  const created = async (res: Promise<{ status: number; raw: string; body: { data: { id: string; number?: number } } }>) => {
    const r = await res;
    assert.ok(r.status === 201 || r.status === 200, r.raw);
    return r.body.data;
  };
  const issue = (customer: string, o: TestOrg = org) =>
    created(apiCall('POST', '/v1/invoices?issue=true', {
      body: { customerId: customer, dueDate: '2031-03-14', lines: [{ description: 'Kagebord', quantity: 1, unitPriceOere: 50_000, vatRateBps: 2500 }] },
    }, o)) as Promise<{ id: string; number: number }>;

  type PageOptions = { form?: Record<string, string>; cookie?: string; host?: string; ip?: string; headers?: Record<string, string>; app?: TestPay };
  const page = (method: 'GET' | 'POST', url: string, opts: PageOptions = {}) =>
    (opts.app ?? pay).app.inject({
      method,
      url,
      remoteAddress: opts.ip ?? '127.0.0.1',
      headers: {
        ...(opts.host ? { host: opts.host } : {}),
        ...(opts.cookie ? { cookie: opts.cookie } : {}),
        ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        'accept-language': 'da',
        ...opts.headers,
      },
      ...(opts.form ? { payload: new URLSearchParams(opts.form).toString() } : {}),
    });

  const links = (o: TestOrg = org) =>
    db.sql<{ id: string; token_enc: Buffer | null; link_base: string; language: string; used_at: Date | null }[]>`
      SELECT id, token_enc, link_base, language, used_at FROM portal_sign_in_links WHERE organization_id = ${o.organizationId} ORDER BY created_at`;
  const mailWakes = (linkId: string) => db.sql`SELECT 1 FROM wake_index WHERE service = 'PortalSignInMail' AND key = ${linkId}`;

  /** Asks for a link and returns its token, read back from the encrypted column the workflow mails it from. */
  async function requestLink(email = EMAIL, opts: { host?: string; base?: string } = {}): Promise<string> {
    // The rate limits have tests of their own; here they would only count this file's sign-ins.
    await db.sql`DELETE FROM portal_sign_in_attempts WHERE organization_id = ${org.organizationId}`;
    const before = (await links()).length;
    const res = await page('POST', `${opts.base ?? `/portal/${SUB}`}/sign-in`, { form: { email }, ip: freshIp(), ...(opts.host ? { host: opts.host } : {}) });
    assert.equal(res.statusCode, 200, res.body);
    const all = await links();
    assert.equal(all.length, before + 1);
    return keyring.decrypt(all.at(-1)!.token_enc!);
  }
  const cookieOf = (res: LightMyRequestResponse) => String(res.headers['set-cookie']).split(';')[0]!;
  const confirmOf = (html: string) => /name="confirm" value="([^"]+)"/.exec(html)?.[1];
  /** Opens a link's confirmation page as a browser does: its cookie and the token in its form. */
  async function openLink(token: string, opts: { base?: string; host?: string } = {}): Promise<{ cookie: string; confirm: string }> {
    const opened = await page('GET', `${opts.base ?? `/portal/${SUB}`}/sign-in/${token}`, opts.host ? { host: opts.host } : {});
    assert.equal(opened.statusCode, 200, opened.body);
    return { cookie: cookieOf(opened), confirm: confirmOf(opened.body)! };
  }
  /** Opens the link and presses its button, as the browser does (same origin: no cross-site headers). */
  async function redeem(token: string, opts: { base?: string; host?: string; form?: Record<string, string> } = {}) {
    const { cookie, confirm } = await openLink(token, opts);
    return page('POST', `${opts.base ?? `/portal/${SUB}`}/sign-in/${token}`, { form: { confirm, ...opts.form }, cookie, ...(opts.host ? { host: opts.host } : {}) });
  }
  async function signIn(email = EMAIL): Promise<string> {
    const token = await requestLink(email);
    const res = await redeem(token);
    assert.equal(res.statusCode, 303, res.body);
    return cookieOf(res);
  }
  const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  const setPortal = (fields: { active?: boolean; selfService?: boolean; palette?: string; primaryColor?: string | null }, o: TestOrg = org, sub = SUB) =>
    db.sql`
      INSERT INTO customer_portals (organization_id, subdomain, active, subscription_self_service, palette, primary_color)
      VALUES (${o.organizationId}, ${sub}, ${fields.active ?? true}, ${fields.selfService ?? false}, ${fields.palette ?? 'lys'}, ${fields.primaryColor ?? null})
      ON CONFLICT (organization_id) DO UPDATE SET active = EXCLUDED.active, subscription_self_service = EXCLUDED.subscription_self_service,
        palette = EXCLUDED.palette, primary_color = EXCLUDED.primary_color`;
  const subscriptionStatus = async (id: string) => (await db.sql<{ status: string }[]>`SELECT status FROM subscriptions WHERE id = ${id}`)[0]!.status;

  before(async () => {
    api = await startTestApp();
    pay = await startTestPay({ portal: { keyring: testDb().keyring, baseDomain: 'kundeportal.test' } });
    org = await createTestOrg({ name: 'Bager Hansen ApS' });
    other = await createTestOrg({ name: 'Anden ApS' });
    customerId = (await created(apiCall('POST', '/v1/customers', { body: { type: 'company', name: 'Kunde A/S', email: EMAIL } }))).id;
    otherCustomerId = (await created(apiCall('POST', '/v1/customers', { body: { type: 'company', name: 'Nabo A/S', email: 'nabo@kunde.dk' } }))).id;
    const foreignCustomer = (await created(apiCall('POST', '/v1/customers', { body: { type: 'company', name: 'Kunde A/S', email: EMAIL } }, other))).id;
    ownInvoice = await issue(customerId);
    otherInvoice = await issue(otherCustomerId);
    foreignInvoice = await issue(foreignCustomer, other);
    subscriptionId = (await created(apiCall('POST', '/v1/subscriptions', {
      body: { customerId, name: 'Brødabonnement', interval: { unit: 'month', count: 1 }, startDate: '2096-01-31', lines: [{ description: 'Rugbrød', quantity: 4, unitPriceOere: 4_000 }] },
    }))).id;
    await setPortal({ active: true, selfService: true });
    await setPortal({ active: false }, other, OTHER);
  });
  after(async () => {
    await pay?.close();
    await api?.close();
  });

  describe('which portal answers', () => {
    it('an unknown and an inactive portal answer the same neutral 404', async () => {
      const unknown = await page('GET', `/portal/${NOBODY}`);
      const inactive = await page('GET', `/portal/${OTHER}`);
      assert.equal(unknown.statusCode, 404);
      assert.equal(inactive.statusCode, 404);
      assert.equal(inactive.body.replaceAll(`/portal/${OTHER}`, `/portal/${NOBODY}`), unknown.body);
      assert.match(unknown.body, /Der er ingen kundeportal på denne adresse/);
      assert.doesNotMatch(inactive.body, /Anden ApS/);
      // Nor can one ask an inactive portal for a link.
      assert.equal((await page('POST', `/portal/${OTHER}/sign-in`, { form: { email: EMAIL } })).statusCode, 404);
    });

    it('an active portal shows the sign-in form in its palette, with its own strict headers', async () => {
      const res = await page('GET', `/portal/${SUB}`);
      assert.equal(res.statusCode, 200);
      assert.match(res.body, new RegExp(`<form method="post" action="/portal/${SUB}/sign-in"`));
      assert.match(res.body, /<body class="portal palette-lys">/);
      assert.match(res.body, /Bager Hansen ApS/);
      assert.equal(res.headers['content-security-policy'], "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-frame-options'], 'DENY');
    });

    it('the portal host <subdomain>.<PORTAL_BASE_DOMAIN> serves the same portal, with links and cookie at its root', async () => {
      const host = `${SUB}.kundeportal.test`;
      const res = await page('GET', '/', { host });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /<form method="post" action="\/sign-in"/);
      assert.match(res.body, /href="\/portal.css"/);
      // The mailed link points at the portal host.
      const token = await requestLink(EMAIL, { host, base: '' });
      assert.equal((await links()).at(-1)!.link_base, `http://${host}/sign-in`);
      const opened = await page('GET', `/sign-in/${token}`, { host });
      assert.match(String(opened.headers['set-cookie']), /^portal_confirm=[A-Za-z0-9_-]{43}; Path=\/sign-in; Max-Age=900; HttpOnly; SameSite=Strict$/);
      const signedIn = await redeem(token, { host, base: '' });
      assert.equal(signedIn.statusCode, 303);
      assert.equal(signedIn.headers.location, '/?lang=da');
      assert.match(String(signedIn.headers['set-cookie']), /; Path=\/; /);
      const home = await page('GET', '/', { host, cookie: cookieOf(signedIn) });
      assert.match(home.body, new RegExp(`href="/invoices/${ownInvoice.id}/pdf"`));
      // On a portal's host only the portal's pages answer: neither another portal's path nor the pay pages.
      assert.equal((await page('GET', `/portal/${SUB}`, { host })).statusCode, 404);
      assert.equal((await page('GET', '/healthz', { host })).statusCode, 404);
      assert.equal((await page('GET', '/healthz')).statusCode, 200);
      // The pay service's own pages stay where they are on its own host.
      assert.match((await page('GET', '/')).body, /Betalingskode/);
    });

    it('a host under the base domain that names no active portal is no portal host (unknown and inactive alike)', async () => {
      const unknown = await page('GET', '/', { host: `${NOBODY}.kundeportal.test` });
      const inactive = await page('GET', '/', { host: `${OTHER}.kundeportal.test` });
      assert.equal(unknown.statusCode, 200);
      assert.match(unknown.body, /Betalingskode/);
      assert.equal(inactive.statusCode, 200);
      assert.equal(inactive.body.replace(/req_[0-9a-f]+/g, ''), unknown.body.replace(/req_[0-9a-f]+/g, ''));
      // Activated, the very next request finds it: no list of portals is kept in memory.
      await setPortal({ active: true }, other, OTHER);
      try {
        assert.match((await page('GET', '/', { host: `${OTHER}.kundeportal.test` })).body, /Anden ApS/);
      } finally {
        await setPortal({ active: false }, other, OTHER);
      }
    });

    it('the pay service\'s own host is never a portal host, even under PORTAL_BASE_DOMAIN', async () => {
      // PAY_BASE_URL=https://betal-….kundeportal.test with PORTAL_BASE_DOMAIN=kundeportal.test, and even an active
      // portal of that very name.
      const name = `betal-${run}`;
      const host = `${name}.kundeportal.test`;
      const owner = await createTestOrg({ name: 'Betal ApS' });
      await setPortal({ active: true }, owner, name);
      const payHere = await startTestPay({ payBaseUrl: `https://${host}`, portal: { keyring: testDb().keyring, baseDomain: 'kundeportal.test' } });
      try {
        const code = await page('GET', '/', { host, app: payHere });
        assert.equal(code.statusCode, 200);
        assert.match(code.body, /Betalingskode/);
        assert.doesNotMatch(code.body, /Betal ApS/);
        assert.equal((await page('GET', '/healthz', { host, app: payHere })).statusCode, 200);
        const callback = await payHere.app.inject({ method: 'POST', url: '/callbacks/test', headers: { host, 'content-type': 'application/json' }, payload: '{}' });
        assert.equal(callback.statusCode, 401, callback.body);
        // Portals stay reachable there by path, and on their own hosts.
        assert.equal((await page('GET', `/portal/${SUB}`, { host, app: payHere })).statusCode, 200);
        assert.match((await page('GET', '/', { host: `${SUB}.kundeportal.test`, app: payHere })).body, /Bager Hansen ApS/);
      } finally {
        await payHere.close();
        await db.sql`DELETE FROM customer_portals WHERE organization_id = ${owner.organizationId}`;
      }
    });

    it('a verified custom domain serves its organisation\'s portal from the next request on, whatever its subdomain becomes', async () => {
      const domain = `konto-${run}.bagerhansen.dk`;
      await db.sql`UPDATE customer_portals SET custom_domain = ${domain}, custom_domain_status = 'unverified' WHERE organization_id = ${org.organizationId}`;
      try {
        assert.match((await page('GET', '/', { host: domain })).body, /Betalingskode/);
        await db.sql`UPDATE customer_portals SET custom_domain_status = 'verified' WHERE organization_id = ${org.organizationId}`;
        const res = await page('GET', '/?lang=en', { host: domain.replace('konto', 'Konto') + '.' });
        assert.equal(res.statusCode, 200);
        assert.match(res.body, /<form method="post" action="\/sign-in"/);
        assert.match(res.body, /Bager Hansen ApS/);
        // The organisation moves to another subdomain and another organisation takes its old one: the custom domain
        // stays the first one's portal.
        await db.sql`UPDATE customer_portals SET subdomain = ${`flyttet-${run}`} WHERE organization_id = ${org.organizationId}`;
        await db.sql`UPDATE customer_portals SET subdomain = ${SUB}, active = true WHERE organization_id = ${other.organizationId}`;
        const moved = await page('GET', '/', { host: domain });
        assert.match(moved.body, /Bager Hansen ApS/);
        assert.doesNotMatch(moved.body, /Anden ApS/);
      } finally {
        await db.sql`UPDATE customer_portals SET subdomain = ${OTHER}, active = false WHERE organization_id = ${other.organizationId}`;
        await db.sql`UPDATE customer_portals SET subdomain = ${SUB}, custom_domain = NULL, custom_domain_status = 'none' WHERE organization_id = ${org.organizationId}`;
      }
    });

    it('a verified payment domain is never a portal host, even if entered as a portal\'s custom domain', async () => {
      const domain = `betal-${run}.bagerhansen.dk`;
      await db.sql`UPDATE customer_portals SET custom_domain = ${domain}, custom_domain_status = 'verified' WHERE organization_id = ${org.organizationId}`;
      try {
        assert.match((await page('GET', '/', { host: domain })).body, /Bager Hansen ApS/);
        await db.sql`
          INSERT INTO payment_domains (organization_id, domain, status, verification_value) VALUES (${other.organizationId}, ${domain}, 'verified', 'x')
          ON CONFLICT (organization_id) DO UPDATE SET domain = EXCLUDED.domain, status = 'verified'`;
        // The pay service's answer for its host (services/pay/plugins/payment-domain-host.ts), not the portal.
        const res = await page('GET', '/', { host: domain });
        assert.doesNotMatch(res.body, /Bager Hansen ApS|class="portal/);
      } finally {
        await db.sql`DELETE FROM payment_domains WHERE organization_id = ${other.organizationId}`;
        await db.sql`UPDATE customer_portals SET custom_domain = NULL, custom_domain_status = 'none' WHERE organization_id = ${org.organizationId}`;
      }
    });

    it('the host is X-Forwarded-Host only behind a trusted proxy (PAY_TRUST_PROXY), as for payment domains', async () => {
      const forwarded = { 'x-forwarded-host': `${SUB}.kundeportal.test` };
      assert.match((await page('GET', '/', { host: 'proxy.internal', headers: forwarded })).body, /Betalingskode/);
      const proxied = await startTestPay({ trustProxy: true, portal: { keyring: testDb().keyring, baseDomain: 'kundeportal.test' } });
      try {
        const res = await page('GET', '/', { host: 'proxy.internal', headers: forwarded, app: proxied });
        assert.equal(res.statusCode, 200);
        assert.match(res.body, /<form method="post" action="\/sign-in"/);
        assert.match(res.body, /Bager Hansen ApS/);
        // The mailed link is built on the forwarded host too.
        await db.sql`DELETE FROM portal_sign_in_attempts WHERE organization_id = ${org.organizationId}`;
        assert.equal((await page('POST', '/sign-in', { host: 'proxy.internal', headers: forwarded, form: { email: EMAIL }, ip: freshIp(), app: proxied })).statusCode, 200);
        assert.equal((await links()).at(-1)!.link_base, `http://${SUB}.kundeportal.test/sign-in`);
      } finally {
        await proxied.close();
      }
    });
  });

  describe('asking for a sign-in link', () => {
    it('a known address gets a link (listed for the mail workflow, token kept encrypted); an unknown one the very same answer and nothing', async () => {
      const before = (await links()).length;
      const known = await page('POST', `/portal/${SUB}/sign-in`, { form: { email: EMAIL }, ip: freshIp() });
      const unknown = await page('POST', `/portal/${SUB}/sign-in`, { form: { email: 'ukendt@kunde.dk' }, ip: freshIp() });
      assert.equal(known.statusCode, 200);
      assert.equal(unknown.statusCode, 200);
      assert.equal(unknown.body, known.body);
      assert.match(known.body, /Hvis adressen er kendt, er et link til at logge ind på vej/);
      const after = await links();
      assert.equal(after.length, before + 1, 'only the known address made a link');
      const link = after.at(-1)!;
      assert.equal(link.link_base, `http://pay.test/portal/${SUB}/sign-in`);
      assert.equal(link.language, 'da');
      assert.equal((await mailWakes(link.id)).length, 1);
      // Stored: the token's hash and its encryption, never the token itself.
      const token = keyring.decrypt(link.token_enc!);
      const [stored] = await db.sql<{ token_sha256: Buffer }[]>`SELECT token_sha256 FROM portal_sign_in_links WHERE id = ${link.id}`;
      assert.deepEqual(stored!.token_sha256, sha256(token));
      assert.ok(!link.token_enc!.includes(Buffer.from(token)));
    });

    it('the answer does not wait for the workflow engine: a known address is not told apart by a slower answer', async () => {
      // An engine whose poke never answers until told to: the page must be answered while the poke is still pending.
      const poked: WorkTarget[] = [];
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let settled = false;
      const engine: EngineClient = {
        send: () => Promise.reject(new Error('not used')),
        poke: (target) => {
          poked.push(target);
          return held.then(() => void (settled = true));
        },
      };
      const slow = await startTestPay({ portal: { keyring: testDb().keyring, engine } });
      try {
        await db.sql`DELETE FROM portal_sign_in_attempts WHERE organization_id = ${org.organizationId}`;
        const before = (await links()).length;
        const known = await page('POST', `/portal/${SUB}/sign-in`, { form: { email: EMAIL }, ip: freshIp(), app: slow });
        assert.equal(known.statusCode, 200);
        assert.match(known.body, /Hvis adressen er kendt, er et link til at logge ind på vej/);
        const link = (await links()).at(-1)!;
        assert.equal((await links()).length, before + 1);
        // Handed to the engine after the answer, and still pending.
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(poked, [{ service: 'PortalSignInMail', handler: 'deliver', key: link.id }]);
        assert.equal(settled, false);
      } finally {
        release();
        await slow.close();
      }
    });

    it('the address is matched as typed or in lower case; another organisation\'s customer with it is not reached', async () => {
      const before = (await links()).length;
      await page('POST', `/portal/${SUB}/sign-in`, { form: { email: '  BOGHOLDERI@Kunde.DK ' }, ip: freshIp() });
      assert.equal((await links()).length, before + 1);
      assert.equal((await links(other)).length, 0);
    });

    it('something that is no e-mail address is asked again (400), with nothing looked up', async () => {
      const res = await page('POST', `/portal/${SUB}/sign-in`, { form: { email: 'ikke en adresse' }, ip: freshIp() });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /role="alert">Skriv en e-mailadresse/);
      assert.match(res.body, /aria-invalid="true"/);
    });

    it('5 links per address within 15 minutes, known or not; then 429 with Retry-After', async () => {
      for (const email of ['grænse@kunde.dk', EMAIL.toUpperCase()]) {
        // An unknown address and a known one (in another spelling: the count is of the address in lower case).
        await db.sql`DELETE FROM portal_sign_in_attempts WHERE organization_id = ${org.organizationId}`;
        for (let i = 0; i < 5; i++) assert.equal((await page('POST', `/portal/${SUB}/sign-in`, { form: { email }, ip: freshIp() })).statusCode, 200);
        const before = (await links()).length;
        const limited = await page('POST', `/portal/${SUB}/sign-in`, { form: { email }, ip: freshIp() });
        assert.equal(limited.statusCode, 429);
        assert.match(limited.body, /Der er bedt om for mange links/);
        const retry = Number(limited.headers['retry-after']);
        assert.ok(retry > 890 && retry <= 900, String(retry));
        assert.equal((await links()).length, before, 'a limited request makes no link');
      }
      // Once the window has passed, the address may ask again.
      await db.sql`UPDATE portal_sign_in_attempts SET attempted_at = attempted_at - interval '16 minutes' WHERE organization_id = ${org.organizationId}`;
      assert.equal((await page('POST', `/portal/${SUB}/sign-in`, { form: { email: EMAIL }, ip: freshIp() })).statusCode, 200);
    });

    it('10 links per client address within 15 minutes, whatever addresses it asks for', async () => {
      await db.sql`DELETE FROM portal_sign_in_attempts WHERE organization_id = ${org.organizationId}`;
      const client = freshIp();
      for (let i = 0; i < 10; i++) {
        assert.equal((await page('POST', `/portal/${SUB}/sign-in`, { form: { email: `gaet${i}@kunde.dk` }, ip: client })).statusCode, 200);
      }
      assert.equal((await page('POST', `/portal/${SUB}/sign-in`, { form: { email: 'gaet10@kunde.dk' }, ip: client })).statusCode, 429);
      // Another client is not held up.
      assert.equal((await page('POST', `/portal/${SUB}/sign-in`, { form: { email: 'gaet10@kunde.dk' }, ip: freshIp() })).statusCode, 200);
    });
  });

  describe('redeeming the link', () => {
    it('opening the link asks first (a mail scanner does not spend it); the link then signs in once @cluster', async () => {
      const token = await requestLink();
      const confirm = await page('GET', `/portal/${SUB}/sign-in/${token}`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, new RegExp(`<form method="post" action="/portal/${SUB}/sign-in/${token}">`));
      assert.match(String(confirm.headers['set-cookie']), new RegExp(`^portal_confirm=[A-Za-z0-9_-]{43}; Path=/portal/${SUB}/sign-in; Max-Age=900; HttpOnly; SameSite=Strict$`));
      assert.equal((await page('GET', `/portal/${SUB}/sign-in/${token}`)).statusCode, 200, 'still valid after being opened');

      const first = await redeem(token, { form: { lang: 'en' } });
      assert.equal(first.statusCode, 303);
      assert.equal(first.headers.location, `/portal/${SUB}?lang=en`);
      const cookie = String(first.headers['set-cookie']);
      assert.match(cookie, new RegExp(`^portal_session=[A-Za-z0-9_-]{43}; Path=/portal/${SUB}; Max-Age=28800; HttpOnly; SameSite=Lax$`));
      const [session] = await db.sql<{ token_sha256: Buffer; expires_at: Date; created_at: Date }[]>`
        SELECT token_sha256, expires_at, created_at FROM portal_sessions WHERE token_sha256 = ${sha256(cookieOf(first).split('=')[1]!)}`;
      assert.equal(session!.expires_at.getTime() - session!.created_at.getTime(), 8 * 3600 * 1000);

      // Pressed again (the page still open, its cookie still there): the link is spent.
      const confirmCookie = cookieOf(confirm);
      const second = await page('POST', `/portal/${SUB}/sign-in/${token}`, {
        form: { confirm: confirmTokenOf(testDb().keyring, sha256(token), confirmCookie.split('=')[1]!) }, cookie: confirmCookie,
      });
      assert.equal(second.statusCode, 410);
      assert.equal(second.headers['set-cookie'], undefined);
      assert.match(second.body, /Linket er allerede brugt eller er udløbet/);
      assert.equal((await page('GET', `/portal/${SUB}/sign-in/${token}`)).statusCode, 410);
    });

    it('an expired link is refused', async () => {
      const token = await requestLink();
      const { cookie, confirm } = await openLink(token);
      await db.sql`UPDATE portal_sign_in_links SET expires_at = now() - interval '1 second' WHERE token_sha256 = ${sha256(token)}`;
      assert.equal((await page('GET', `/portal/${SUB}/sign-in/${token}`)).statusCode, 410);
      const res = await page('POST', `/portal/${SUB}/sign-in/${token}`, { form: { confirm }, cookie });
      assert.equal(res.statusCode, 410);
      assert.equal(res.headers['set-cookie'], undefined);
    });

    it('a link works only on its own organisation\'s portal, and a made-up token nowhere', async () => {
      const token = await requestLink();
      const { cookie, confirm } = await openLink(token);
      await setPortal({ active: true }, other, OTHER);
      try {
        assert.equal((await page('POST', `/portal/${OTHER}/sign-in/${token}`, { form: { confirm }, cookie })).statusCode, 410);
      } finally {
        await setPortal({ active: false }, other, OTHER);
      }
      const madeUp = 'A'.repeat(43);
      const madeUpConfirm = confirmTokenOf(testDb().keyring, sha256(madeUp), cookie.split('=')[1]!);
      assert.equal((await page('POST', `/portal/${SUB}/sign-in/${madeUp}`, { form: { confirm: madeUpConfirm }, cookie })).statusCode, 410);
      assert.equal((await page('POST', `/portal/${SUB}/sign-in/not-a-token`, { form: { confirm }, cookie })).statusCode, 410);
      // The real one still works: the failed tries did not touch it.
      assert.equal((await page('POST', `/portal/${SUB}/sign-in/${token}`, { form: { confirm }, cookie })).statusCode, 303);
    });

    it('login CSRF: only this browser\'s press on the portal\'s own confirmation page spends the link', async () => {
      const token = await requestLink();
      const url = `/portal/${SUB}/sign-in/${token}`;
      const { cookie, confirm } = await openLink(token);
      const otherBrowser = await openLink(token);
      const otherLink = await openLink(await requestLink());
      const refusals: [string, PageOptions][] = [
        // Another site's form: the Strict cookie does not go with it, so neither does a token for it.
        ['no cookie, no token', { form: {} }],
        ['the token without its cookie', { form: { confirm } }],
        ['the cookie without the token', { form: {}, cookie }],
        ['another browser\'s token', { form: { confirm: otherBrowser.confirm }, cookie }],
        ['another link\'s token', { form: { confirm: otherLink.confirm }, cookie: otherLink.cookie }],
        // Even with both, a cross-site request (a browser that would send the cookie) is refused by its headers.
        ['Sec-Fetch-Site: cross-site', { form: { confirm }, cookie, headers: { 'sec-fetch-site': 'cross-site' } }],
        ['Sec-Fetch-Site: same-site', { form: { confirm }, cookie, headers: { 'sec-fetch-site': 'same-site' } }],
        ['Origin of another site', { form: { confirm }, cookie, headers: { origin: 'https://angriber.example' } }],
      ];
      for (const [what, opts] of refusals) {
        const res = await page('POST', url, opts);
        assert.equal(res.statusCode, 403, what);
        assert.equal(res.headers['set-cookie'], undefined, what);
        assert.match(res.body, /Siden var for gammel/, what);
      }
      const [unspent] = await db.sql<{ used_at: Date | null }[]>`SELECT used_at FROM portal_sign_in_links WHERE token_sha256 = ${sha256(token)}`;
      assert.equal(unspent!.used_at, null, 'no refused request spent the link');
      // What a browser sends with the page's own form (Origin "null" under Referrer-Policy: no-referrer) is accepted.
      const ok = await page('POST', url, { form: { confirm }, cookie, headers: { 'sec-fetch-site': 'same-origin', origin: 'null' } });
      assert.equal(ok.statusCode, 303, ok.body);
      // And an Origin naming the request's own host is too.
      const next = await requestLink();
      const opened = await openLink(next);
      const own = await page('POST', `/portal/${SUB}/sign-in/${next}`, { form: { confirm: opened.confirm }, cookie: opened.cookie, headers: { origin: 'http://localhost', 'sec-fetch-site': 'same-origin' } });
      assert.equal(own.statusCode, 303, own.body);
    });
  });

  describe('signed in', () => {
    let cookie: string;
    before(async () => {
      cookie = await signIn();
    });

    it('shows the customer\'s own invoices and balance, nobody else\'s @cluster', async () => {
      const res = await page('GET', `/portal/${SUB}`, { cookie });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, new RegExp(`data-invoice-number="${ownInvoice.number}"`));
      assert.match(res.body, /data-testid="outstanding">625,00 kr\.</);
      assert.match(res.body, new RegExp(`href="/portal/${SUB}/invoices/${ownInvoice.id}/pay"`));
      assert.doesNotMatch(res.body, new RegExp(otherInvoice.id));
      assert.doesNotMatch(res.body, new RegExp(foreignInvoice.id));
      assert.match(res.body, /Log ud/);
    });

    it('labels an invoice the header counts as overdue "Forfalden" / "Overdue", also before a reminder makes its status `overdue`', async () => {
      const itemOf = (html: string, number: number) => new RegExp(`data-invoice-number="${number}"[\\s\\S]*?</li>`).exec(html)?.[0] ?? '';
      const statusOf = (html: string, number: number) => /Status<\/dt><dd>([^<]*)</.exec(itemOf(html, number))?.[1];
      // Issued late: due before today, so the balance counts it as overdue at once, while its status is `issued`.
      const late = await created(apiCall('POST', '/v1/invoices?issue=true', {
        body: { customerId, dueDate: '2020-01-02', lines: [{ description: 'Kringle', quantity: 1, unitPriceOere: 10_000, vatRateBps: 2500 }] },
      })) as { id: string; number: number };
      try {
        assert.equal((await apiCall('GET', `/v1/invoices/${late.id}`)).body.data.status, 'issued');
        const da = await page('GET', `/portal/${SUB}`, { cookie });
        assert.match(da.body, /data-testid="overdue">125,00 kr\.</);
        assert.equal(statusOf(da.body, late.number), 'Forfalden');
        assert.equal(statusOf(da.body, ownInvoice.number), 'Åben');
        const en = await page('GET', `/portal/${SUB}?lang=en`, { cookie });
        assert.equal(statusOf(en.body, late.number), 'Overdue');
        assert.equal(statusOf(en.body, ownInvoice.number), 'Open');
        // A status the engines wrote is shown as the API has it.
        await db.sql`UPDATE invoices SET status = 'collections' WHERE id = ${late.id}`;
        assert.equal(statusOf((await page('GET', `/portal/${SUB}`, { cookie })).body, late.number), 'Til inkasso');
      } finally {
        // Credited in full, so that the balance the other tests see is as before.
        await db.sql`UPDATE invoices SET status = 'issued' WHERE id = ${late.id}`;
        await created(apiCall('POST', `/v1/invoices/${late.id}/credit`, { body: { reason: 'Testfaktura' } }));
      }
    });

    it('downloads the invoice\'s stored PDF; another customer\'s or organisation\'s invoice is 404', async () => {
      const pdf = await page('GET', `/portal/${SUB}/invoices/${ownInvoice.id}/pdf`, { cookie });
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      assert.equal(pdf.headers['content-disposition'], `attachment; filename="faktura-${ownInvoice.number}.pdf"`);
      const [stored] = await db.sql<{ content: Buffer }[]>`
        SELECT d.content FROM documents d JOIN invoices i ON i.document_sha256 = d.sha256 WHERE i.id = ${ownInvoice.id}`;
      assert.ok(pdf.rawPayload.equals(stored!.content));
      for (const id of [otherInvoice.id, foreignInvoice.id, '00000000-0000-7000-8000-000000000000', 'nonsense']) {
        assert.equal((await page('GET', `/portal/${SUB}/invoices/${id}/pdf`, { cookie })).statusCode, 404, id);
        assert.equal((await page('GET', `/portal/${SUB}/invoices/${id}/pay`, { cookie })).statusCode, 404, id);
      }
      // Without a session: the sign-in page, not the document.
      const anonymous = await page('GET', `/portal/${SUB}/invoices/${ownInvoice.id}/pdf`);
      assert.equal(anonymous.statusCode, 401);
      assert.match(anonymous.body, /Du er ikke længere logget ind/);
    });

    it('"Pay" goes to the invoice\'s payment link on the pay page, made now if it had none', async () => {
      // Issuing made the link; as an invoice issued before that did, it has none.
      assert.equal((await db.sql`SELECT 1 FROM payment_links WHERE invoice_id = ${ownInvoice.id}`).length, 1);
      await db.sql`DELETE FROM payment_links WHERE invoice_id = ${ownInvoice.id}`;
      const res = await page('GET', `/portal/${SUB}/invoices/${ownInvoice.id}/pay`, { cookie });
      assert.equal(res.statusCode, 303);
      const [link] = await db.sql<{ reference: string }[]>`SELECT reference FROM payment_links WHERE invoice_id = ${ownInvoice.id}`;
      assert.equal(res.headers.location, `http://pay.test/p/${link!.reference}?lang=da`);
      // The same link the next time.
      assert.equal((await page('GET', `/portal/${SUB}/invoices/${ownInvoice.id}/pay`, { cookie })).headers.location, res.headers.location);
    });

    it('a session is its own portal\'s: another organisation\'s portal does not know it', async () => {
      await setPortal({ active: true }, other, OTHER);
      try {
        const res = await page('GET', `/portal/${OTHER}`, { cookie });
        assert.equal(res.statusCode, 200);
        assert.match(res.body, /<h1>Log ind<\/h1>/);
        assert.doesNotMatch(res.body, /Log ud/);
      } finally {
        await setPortal({ active: false }, other, OTHER);
      }
    });

    describe('subscriptions', () => {
      it('with self-service: listed with Pause and Cancel; Pause needs the session\'s CSRF token, then pauses as the API does', async () => {
        const home = await page('GET', `/portal/${SUB}`, { cookie });
        assert.match(home.body, /data-testid="subscriptions"/);
        assert.match(home.body, /Brødabonnement/);
        const csrf = csrfOf(home.body)!;
        const action = `/portal/${SUB}/subscriptions/${subscriptionId}/pause`;
        assert.match(home.body, new RegExp(`action="${action}"`));

        const forms: Record<string, string>[] = [{}, { csrf: 'forkert' }, { csrf: csrf.slice(0, -2) + (csrf.endsWith('AA') ? 'BB' : 'AA') }];
        for (const form of forms) {
          const refused = await page('POST', action, { cookie, form });
          assert.equal(refused.statusCode, 403, JSON.stringify(form));
          assert.match(refused.body, /Siden var for gammel/);
        }
        // Another session's token is not this one's.
        const otherCookie = await signIn();
        const otherCsrf = csrfOf((await page('GET', `/portal/${SUB}`, { cookie: otherCookie })).body)!;
        assert.notEqual(otherCsrf, csrf);
        assert.equal((await page('POST', action, { cookie, form: { csrf: otherCsrf } })).statusCode, 403);
        assert.equal(await subscriptionStatus(subscriptionId), 'active');

        const paused = await page('POST', action, { cookie, form: { csrf } });
        assert.equal(paused.statusCode, 303);
        assert.equal(paused.headers.location, `/portal/${SUB}?lang=da&done=pause`);
        assert.equal(await subscriptionStatus(subscriptionId), 'paused');
        const [event] = await db.sql<{ type: string }[]>`SELECT type FROM events WHERE entity_id = ${subscriptionId} ORDER BY sekvensnummer DESC LIMIT 1`;
        assert.equal(event!.type, 'subscription.paused');
        const after = await page('GET', String(paused.headers.location), { cookie });
        assert.match(after.body, /Abonnementet er sat på pause/);
        assert.match(after.body, /data-testid="subscription-status">Sat på pause</);

        // Pausing again is refused as the lifecycle refuses it.
        const again = await page('POST', action, { cookie, form: { csrf } });
        assert.equal(again.statusCode, 422);
        assert.match(again.body, /Det kan ikke lade sig gøre/);
        const resumed = await page('POST', `/portal/${SUB}/subscriptions/${subscriptionId}/resume`, { cookie, form: { csrf } });
        assert.equal(resumed.statusCode, 303);
        assert.equal(await subscriptionStatus(subscriptionId), 'active');
      });

      it('another customer\'s subscription, or an action there is not, is 404', async () => {
        const theirs = (await created(apiCall('POST', '/v1/subscriptions', {
          body: { customerId: otherCustomerId, name: 'Kage', interval: { unit: 'month', count: 1 }, startDate: '2096-01-31', lines: [{ description: 'Kage', quantity: 1, unitPriceOere: 1_000 }] },
        }))).id;
        const csrf = csrfOf((await page('GET', `/portal/${SUB}`, { cookie })).body)!;
        assert.equal((await page('POST', `/portal/${SUB}/subscriptions/${theirs}/cancel`, { cookie, form: { csrf } })).statusCode, 404);
        assert.equal(await subscriptionStatus(theirs), 'active');
        assert.equal((await page('POST', `/portal/${SUB}/subscriptions/${subscriptionId}/delete`, { cookie, form: { csrf } })).statusCode, 404);
      });

      it('a malformed id in any of the portal\'s id paths is the same 404 as an unknown one, never reaching SQL', async () => {
        const csrf = csrfOf((await page('GET', `/portal/${SUB}`, { cookie })).body)!;
        const unknown = '00000000-0000-7000-8000-000000000000';
        for (const id of [unknown, 'not-a-uuid', 'kunde@example.dk', '010101-1234', 'x'.repeat(2000), `${subscriptionId}x`]) {
          const cancel = await page('POST', `/portal/${SUB}/subscriptions/${encodeURIComponent(id)}/cancel`, { cookie, form: { csrf } });
          assert.equal(cancel.statusCode, 404, id.slice(0, 40));
          for (const what of ['pdf', 'pay']) {
            assert.equal((await page('GET', `/portal/${SUB}/invoices/${encodeURIComponent(id)}/${what}`, { cookie })).statusCode, 404, id.slice(0, 40));
          }
        }
        assert.equal(await subscriptionStatus(subscriptionId), 'active');
        assert.ok(!pay.logs().includes('"level":50'), 'an error was logged');
      });

      it('without self-service: no subscription section, and the actions are refused', async () => {
        await setPortal({ active: true, selfService: false });
        try {
          const home = await page('GET', `/portal/${SUB}`, { cookie });
          assert.equal(home.statusCode, 200);
          assert.doesNotMatch(home.body, /data-testid="subscriptions"/);
          assert.doesNotMatch(home.body, /Brødabonnement/);
          const csrf = csrfOf(home.body)!;
          const res = await page('POST', `/portal/${SUB}/subscriptions/${subscriptionId}/cancel`, { cookie, form: { csrf } });
          assert.equal(res.statusCode, 404);
          assert.equal(await subscriptionStatus(subscriptionId), 'active');
        } finally {
          await setPortal({ active: true, selfService: true });
        }
      });
    });

    it('signing out needs the CSRF token, ends the session for good and clears the cookie @cluster', async () => {
      const mine = await signIn();
      const csrf = csrfOf((await page('GET', `/portal/${SUB}`, { cookie: mine })).body)!;
      assert.equal((await page('POST', `/portal/${SUB}/sign-out`, { cookie: mine, form: {} })).statusCode, 403);
      const out = await page('POST', `/portal/${SUB}/sign-out`, { cookie: mine, form: { csrf } });
      assert.equal(out.statusCode, 200);
      assert.match(String(out.headers['set-cookie']), new RegExp(`^portal_session=; Path=/portal/${SUB}; Max-Age=0; HttpOnly; SameSite=Lax$`));
      assert.match(out.body, /Du er logget ud/);
      const after = await page('GET', `/portal/${SUB}`, { cookie: mine });
      assert.match(after.body, /<h1>Log ind<\/h1>/);
      assert.equal((await page('GET', `/portal/${SUB}/invoices/${ownInvoice.id}/pdf`, { cookie: mine })).statusCode, 401);
    });

    it('every portal cookie is Secure on an https address or over https behind a trusted proxy; another session\'s CSRF token signs no one out', async () => {
      const secure = await startTestPay({ payBaseUrl: 'https://pay.test', portal: { keyring: testDb().keyring } });
      const proxied = await startTestPay({ trustProxy: true, portal: { keyring: testDb().keyring } });
      try {
        await db.sql`DELETE FROM portal_sign_in_attempts WHERE organization_id = ${org.organizationId}`;
        assert.equal((await page('POST', `/portal/${SUB}/sign-in`, { form: { email: EMAIL }, ip: freshIp(), app: secure })).statusCode, 200);
        const token = keyring.decrypt((await links()).at(-1)!.token_enc!);
        const opened = await page('GET', `/portal/${SUB}/sign-in/${token}`, { app: secure });
        assert.match(String(opened.headers['set-cookie']), new RegExp(`^portal_confirm=[A-Za-z0-9_-]{43}; Path=/portal/${SUB}/sign-in; Max-Age=900; HttpOnly; SameSite=Strict; Secure$`));
        const signedIn = await page('POST', `/portal/${SUB}/sign-in/${token}`, { form: { confirm: confirmOf(opened.body)! }, cookie: cookieOf(opened), app: secure });
        assert.equal(signedIn.statusCode, 303, signedIn.body);
        assert.match(String(signedIn.headers['set-cookie']), new RegExp(`^portal_session=[A-Za-z0-9_-]{43}; Path=/portal/${SUB}; Max-Age=28800; HttpOnly; SameSite=Lax; Secure$`));
        const mine = cookieOf(signedIn);

        const theirs = await signIn();
        const theirCsrf = csrfOf((await page('GET', `/portal/${SUB}`, { cookie: theirs })).body)!;
        const refused = await page('POST', `/portal/${SUB}/sign-out`, { cookie: mine, form: { csrf: theirCsrf }, app: secure });
        assert.equal(refused.statusCode, 403);
        assert.match(refused.body, /Siden var for gammel/);
        assert.equal(refused.headers['set-cookie'], undefined);
        assert.match((await page('GET', `/portal/${SUB}`, { cookie: mine, app: secure })).body, /Dine fakturaer/);

        const csrf = csrfOf((await page('GET', `/portal/${SUB}`, { cookie: mine, app: secure })).body)!;
        const out = await page('POST', `/portal/${SUB}/sign-out`, { cookie: mine, form: { csrf }, app: secure });
        assert.equal(out.statusCode, 200);
        assert.match(String(out.headers['set-cookie']), new RegExp(`^portal_session=; Path=/portal/${SUB}; Max-Age=0; HttpOnly; SameSite=Lax; Secure$`));

        // An http address, but the request came over https to the trusted proxy in front.
        const viaProxy = await page('GET', `/portal/${SUB}/sign-in/${await requestLink()}`, { app: proxied, headers: { 'x-forwarded-proto': 'https' } });
        assert.match(String(viaProxy.headers['set-cookie']), new RegExp(`^portal_confirm=[A-Za-z0-9_-]{43}; Path=/portal/${SUB}/sign-in; Max-Age=900; HttpOnly; SameSite=Strict; Secure$`));
      } finally {
        await secure.close();
        await proxied.close();
      }
    });

    it('an expired session, or one whose address no customer has any more, is signed out', async () => {
      const mine = await signIn();
      await db.sql`UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE token_sha256 = ${sha256(mine.split('=')[1]!)}`;
      assert.match((await page('GET', `/portal/${SUB}`, { cookie: mine })).body, /<h1>Log ind<\/h1>/);

      const moving = (await created(apiCall('POST', '/v1/customers', { body: { type: 'person', name: 'Flytter', email: 'flytter@kunde.dk' } }))).id;
      const theirs = await signIn('flytter@kunde.dk');
      assert.match((await page('GET', `/portal/${SUB}`, { cookie: theirs })).body, /Dine fakturaer/);
      const patched = await apiCall('PATCH', `/v1/customers/${moving}`, { body: { email: 'ny@kunde.dk' } });
      assert.equal(patched.status, 200, patched.raw);
      assert.match((await page('GET', `/portal/${SUB}`, { cookie: theirs })).body, /<h1>Log ind<\/h1>/);
    });
  });

  describe('branding', () => {
    it('the palette, the primary colour as accent (with readable text on it) and the light logo', async () => {
      await setPortal({ active: true, selfService: true, palette: 'skov', primaryColor: '#FFD700' });
      const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360f8cf000000030101' + '00c9fe92ef0000000049454e44ae426082', 'hex');
      const hash = sha256(png).toString('hex');
      await db.sql`INSERT INTO branding_images (organization_id, sha256, mime, content, width, height) VALUES (${org.organizationId}, ${hash}, 'image/png', ${png}, 1, 1)`;
      await db.sql`INSERT INTO branding_logos (organization_id, variant, sha256) VALUES (${org.organizationId}, 'light', ${hash})`;
      try {
        const res = await page('GET', `/portal/${SUB}`);
        assert.match(res.body, /<body class="portal palette-skov">/);
        assert.match(res.body, new RegExp(`<img class="logo" src="/portal/${SUB}/logo/${hash}" alt="Bager Hansen ApS">`));
        const logo = await page('GET', `/portal/${SUB}/logo/${hash}`);
        assert.equal(logo.statusCode, 200);
        assert.equal(logo.headers['content-type'], 'image/png');
        assert.ok(logo.rawPayload.equals(png));
        assert.equal(logo.headers['content-security-policy'], "default-src 'none'; style-src 'unsafe-inline'; sandbox");
        assert.equal((await page('GET', `/portal/${SUB}/logo/${'0'.repeat(64)}`)).statusCode, 404);
        // Only the current light logo: one it replaced (now the dark one) or any other image it uploaded is 404.
        const newer = Buffer.concat([png, Buffer.from('00', 'hex')]);
        const newerHash = sha256(newer).toString('hex');
        const stray = Buffer.concat([png, Buffer.from('01', 'hex')]);
        const strayHash = sha256(stray).toString('hex');
        await db.sql`INSERT INTO branding_images (organization_id, sha256, mime, content, width, height) VALUES (${org.organizationId}, ${newerHash}, 'image/png', ${newer}, 1, 1), (${org.organizationId}, ${strayHash}, 'image/png', ${stray}, 1, 1)`;
        await db.sql`UPDATE branding_logos SET sha256 = ${newerHash} WHERE organization_id = ${org.organizationId} AND variant = 'light'`;
        await db.sql`INSERT INTO branding_logos (organization_id, variant, sha256) VALUES (${org.organizationId}, 'dark', ${hash})`;
        assert.match((await page('GET', `/portal/${SUB}`)).body, new RegExp(`src="/portal/${SUB}/logo/${newerHash}"`));
        assert.ok((await page('GET', `/portal/${SUB}/logo/${newerHash}`)).rawPayload.equals(newer));
        assert.equal((await page('GET', `/portal/${SUB}/logo/${hash}`)).statusCode, 404, 'the replaced (now dark) logo');
        assert.equal((await page('GET', `/portal/${SUB}/logo/${strayHash}`)).statusCode, 404, 'an image that is no logo');
        await db.sql`DELETE FROM branding_logos WHERE organization_id = ${org.organizationId}`;
        assert.equal((await page('GET', `/portal/${SUB}/logo/${newerHash}`)).statusCode, 404, 'a deleted logo');
        // Gold is light: black text on it.
        const theme = await page('GET', `/portal/${SUB}/theme.css`);
        assert.equal(theme.body, 'body.portal { --accent: #ffd700; --accent-text: #000000; }\n');
        await setPortal({ active: true, selfService: true, palette: 'skov', primaryColor: '#1A237E' });
        assert.equal((await page('GET', `/portal/${SUB}/theme.css`)).body, 'body.portal { --accent: #1a237e; --accent-text: #ffffff; }\n');
        const css = await page('GET', `/portal/${SUB}/portal.css`);
        assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
        for (const palette of ['smoer', 'lys', 'beton', 'sand', 'graa', 'mint', 'blaa', 'is', 'groen', 'varm', 'lavendel', 'rosa', 'moerk', 'midnat', 'grafit', 'skov', 'espresso', 'vin']) {
          assert.match(css.body, new RegExp(`\\.palette-${palette} +\\{ --bg: #`), palette);
        }
      } finally {
        await db.sql`DELETE FROM branding_logos WHERE organization_id = ${org.organizationId}`;
        await setPortal({ active: true, selfService: true });
      }
    });
  });

  it('logs name neither the token nor the address', async () => {
    const token = await requestLink();
    await redeem(token);
    const logs = pay.logs();
    assert.ok(logs.includes('/portal/[subdomain]/sign-in/[token]'), 'the redeeming request is logged by its route');
    assert.ok(!logs.includes(token));
    assert.ok(!logs.includes(EMAIL) && !logs.includes('bogholderi'));
  });
});
