import assert from 'node:assert/strict';
import { call, createTestKey, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';
import { bookPayment } from '../../services/payments/book-payment.ts';
import { sha256 } from '../../services/shared/crypto.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const PAY_BASE = 'http://pay.test';
const ROUTES = [
  { path: '/v1/verification-sessions', kind: 'verification', page: 'verification', final: 'verified' },
  { path: '/v1/card-setup-sessions', kind: 'card_setup', page: 'card-setup', final: 'ready' },
  { path: '/v1/accounting-connections', kind: 'accounting_connection', page: 'accounting-connection', final: 'connected' },
] as const;
const [VERIFICATION, CARD_SETUP, ACCOUNTING] = ROUTES;
type Route = (typeof ROUTES)[number];

interface SessionRow {
  id: string;
  kind: string;
  status: string;
  token_hash: Buffer;
  token_enc: Buffer | null;
  created_at: Date;
  expires_at: Date;
  completed_at: Date | null;
  ended_at: Date | null;
}

/** The start links: POST /v1/verification-sessions, /v1/card-setup-sessions, /v1/accounting-connections and their pages. */
describe('start links', () => {
  let api: TestApp;
  let pay: TestPay;
  const sql = () => testDb().db.sql;

  before(async () => {
    api = await startTestApp({ payBaseUrl: PAY_BASE });
    pay = await startTestPay({ payBaseUrl: PAY_BASE });
  });
  after(async () => {
    await pay?.close();
    await api?.close();
  });

  const start = (org: TestOrg, route: Route, opts: { idempotencyKey?: string | null; body?: unknown; key?: string } = {}) =>
    call(api.app, 'POST', route.path, { ...opts, key: opts.key ?? org.apiKey });
  const verification = async (org: TestOrg) => (await call(api.app, 'GET', '/v1/settings', { key: org.apiKey })).body.data.verification as string;
  const sessions = (org: TestOrg) =>
    sql()<SessionRow[]>`SELECT * FROM start_link_sessions WHERE organization_id = ${org.organizationId} ORDER BY created_at, id`;
  /** The page's path on the pay service, from a session's url. */
  const pathOf = (url: string) => {
    assert.ok(url.startsWith(`${PAY_BASE}/test-provider/`), url);
    return url.slice(PAY_BASE.length);
  };
  const page = (path: string, headers: Record<string, string> = {}) => pay.app.inject({ method: 'GET', url: path, headers });
  const form = (path: string, fields: Record<string, string>) =>
    pay.app.inject({ method: 'POST', url: path, headers: FORM, payload: new URLSearchParams(fields).toString() });
  /** What a person's click does: the form's POST, then the page the redirect leads to. */
  async function click(path: string, outcome: 'complete' | 'abandon', lang: 'da' | 'en' = 'en') {
    const res = await form(path, { outcome, lang });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${path}?lang=${lang}`);
    return page(res.headers.location);
  }

  it('the first call answers 201 {id, url, status, expiresAt} with no Location; the link is a 256-bit token kept hashed and encrypted', async () => {
    const org = await createTestOrg();
    const res = await start(org, VERIFICATION);
    assert.equal(res.status, 201, res.raw);
    assert.equal(res.headers.location, undefined);
    const [row] = await sessions(org);
    assert.ok(row);
    const token = /^http:\/\/pay\.test\/test-provider\/verification\/([A-Za-z0-9_-]{43})$/.exec(res.body.data.url)?.[1];
    assert.ok(token, res.body.data.url);
    assert.deepEqual(res.body, {
      data: { id: row.id, url: `${PAY_BASE}/test-provider/verification/${token}`, status: 'pending', expiresAt: row.expires_at.toISOString() },
      meta: {},
    });
    assert.match(row.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // 24 hours on the organisation's clock (a fresh sandbox's test clock is real time).
    assert.equal(row.expires_at.getTime() - row.created_at.getTime(), 24 * 3600_000);
    assert.equal(row.kind, 'verification');
    assert.equal(row.status, 'open');
    assert.ok(sha256(token).equals(row.token_hash));
    assert.ok(row.token_enc && !row.token_enc.toString('latin1').includes(token));
    assert.equal(await verification(org), 'pending');
  });

  it('a repeat while the link is open answers 200 with the same session; the same key replays the 201', async () => {
    const org = await createTestOrg();
    for (const route of ROUTES) {
      const key = `start-${route.kind}-${org.organizationId}`;
      const first = await start(org, route, { idempotencyKey: key });
      assert.equal(first.status, 201, first.raw);
      const again = await start(org, route);
      assert.equal(again.status, 200, again.raw);
      assert.equal(again.headers.location, undefined);
      assert.deepEqual(again.body, first.body);
      const replay = await start(org, route, { idempotencyKey: key });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.body, { data: first.body.data, meta: { replayed: true } });
    }
    // One session per kind, each with its own link.
    const rows = await sessions(org);
    assert.deepEqual(rows.map((r) => [r.kind, r.status]), [['verification', 'open'], ['card_setup', 'open'], ['accounting_connection', 'open']]);
  });

  it('completing the verification on the page: the page says so, a repeat answers 200 verified with no link, settings say verified', async () => {
    const org = await createTestOrg({ name: 'Bager Hansen ApS' });
    const first = (await start(org, VERIFICATION)).body.data;
    const path = pathOf(first.url);

    const shown = await page(path, { 'accept-language': 'en-GB,en;q=0.9' });
    assert.equal(shown.statusCode, 200);
    assert.equal(shown.headers['cache-control'], 'no-store');
    assert.equal(shown.headers['referrer-policy'], 'no-referrer');
    assert.match(String(shown.headers['content-security-policy']), /form-action 'self'/);
    assert.match(shown.body, /<h1>Verify business identity<\/h1>/);
    assert.match(shown.body, /Bager Hansen ApS needs to verify the business&#x27;s identity/);
    assert.match(shown.body, new RegExp(`<form method="post" action="${path}">`));
    assert.match(shown.body, /<button type="submit" name="outcome" value="complete" class="primary">Complete<\/button>/);
    assert.match(shown.body, /<button type="submit" name="outcome" value="abandon" class="secondary">Abandon<\/button>/);
    assert.match((await page(path)).body, /<h1>Bekræft virksomhedens identitet<\/h1>/); // Danish without a stated preference

    const done = await click(path, 'complete');
    assert.equal(done.statusCode, 200);
    assert.match(done.body, /The business identity is verified\. Payouts are no longer held\./);
    const [row] = await sessions(org);
    assert.equal(row!.status, 'completed');
    assert.ok(row!.completed_at);
    assert.equal(row!.token_enc, null);
    assert.equal(await verification(org), 'verified');

    const repeat = await start(org, VERIFICATION);
    assert.equal(repeat.status, 200, repeat.raw);
    assert.deepEqual(repeat.body, { data: { id: first.id, url: null, status: 'verified', expiresAt: null }, meta: {} });
    // The link stays a record of the step: clicking again changes nothing.
    assert.match((await click(path, 'complete')).body, /The business identity is verified/);
    assert.match((await click(path, 'abandon')).body, /The business identity is verified/);
    assert.equal((await sessions(org)).length, 1);
    assert.equal(await verification(org), 'verified');
  });

  it('card setup completes as ready and the accounting connection as connected; neither touches verification', async () => {
    const org = await createTestOrg();
    for (const [route, text] of [[CARD_SETUP, 'The card fields are set up and ready.'], [ACCOUNTING, 'The accounting system is connected.']] as const) {
      const first = (await start(org, route)).body.data;
      const path = pathOf(first.url);
      assert.equal(path.split('/')[2], route.page);
      const done = await click(path, 'complete');
      assert.equal(done.statusCode, 200);
      assert.match(done.body, new RegExp(text));
      const repeat = await start(org, route);
      assert.deepEqual(repeat.body, { data: { id: first.id, url: null, status: route.final, expiresAt: null }, meta: {} });
      assert.equal(repeat.status, 200);
    }
    assert.equal(await verification(org), 'unverified');
    // The verification is its own session: still to be opened.
    assert.equal((await start(org, VERIFICATION)).status, 201);
  });

  it('abandoning on the page ends the link; the next call opens a new session (201, a new id); verification goes back to unverified', async () => {
    const org = await createTestOrg();
    const first = (await start(org, VERIFICATION)).body.data;
    assert.equal(await verification(org), 'pending');
    const path = pathOf(first.url);
    const gone = await click(path, 'abandon', 'da');
    assert.equal(gone.statusCode, 410);
    assert.match(gone.body, /Trinnet er afbrudt/);
    assert.equal(await verification(org), 'unverified');
    // An abandoned link cannot be completed afterwards.
    assert.equal((await click(path, 'complete')).statusCode, 410);
    assert.equal(await verification(org), 'unverified');

    const next = await start(org, VERIFICATION);
    assert.equal(next.status, 201, next.raw);
    assert.notEqual(next.body.data.id, first.id);
    assert.notEqual(next.body.data.url, first.url);
    assert.equal(next.body.data.status, 'pending');
    assert.equal(await verification(org), 'pending');
    assert.deepEqual((await sessions(org)).map((r) => [r.id, r.status, r.ended_at !== null]), [
      [first.id, 'abandoned', true],
      [next.body.data.id, 'open', false],
    ]);
    // The new link completes as the first would have.
    await click(pathOf(next.body.data.url), 'complete');
    assert.equal(await verification(org), 'verified');
  });

  it('a link expires after 24 hours on the organisation\'s clock: the page says so and the next call opens a new session', async () => {
    const org = await createTestOrg();
    const first = (await start(org, CARD_SETUP)).body.data;
    const path = pathOf(first.url);
    const advanced = await call(api.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { to: new Date(Date.parse(first.expiresAt) + 1000).toISOString() } });
    assert.equal(advanced.status, 200, advanced.raw);

    const expired = await page(path, { 'accept-language': 'en' });
    assert.equal(expired.statusCode, 410);
    assert.match(expired.body, /<h1>This link has expired<\/h1>/);
    assert.match(expired.body, /A link works for 24 hours\. Ask for a new link to complete the step\./);
    // Too late to complete it.
    assert.equal((await click(path, 'complete')).statusCode, 410);
    assert.equal((await sessions(org))[0]!.status, 'open');

    const next = await start(org, CARD_SETUP);
    assert.equal(next.status, 201, next.raw);
    assert.notEqual(next.body.data.id, first.id);
    // The new one runs 24 hours from the advanced clock.
    assert.ok(Date.parse(next.body.data.expiresAt) >= Date.parse(first.expiresAt) + 24 * 3600_000, next.body.data.expiresAt);
    assert.deepEqual((await sessions(org)).map((r) => [r.id, r.status, r.token_enc === null]), [
      [first.id, 'expired', true],
      [next.body.data.id, 'open', false],
    ]);
    assert.equal((await page(path)).statusCode, 410);
    assert.equal((await page(pathOf(next.body.data.url))).statusCode, 200);
  });

  it('an expired verification link leaves verification pending until the next call, which opens a new session', async () => {
    const org = await createTestOrg();
    const first = (await start(org, VERIFICATION)).body.data;
    await sql()`UPDATE start_link_sessions SET expires_at = now() - interval '1 second' WHERE organization_id = ${org.organizationId}`;
    assert.equal((await page(pathOf(first.url))).statusCode, 410);
    assert.equal(await verification(org), 'pending');
    const next = await start(org, VERIFICATION);
    assert.equal(next.status, 201);
    assert.notEqual(next.body.data.id, first.id);
    assert.equal(await verification(org), 'pending');
  });

  it('the pages: an unknown token or another kind\'s path is a 404 page; a form without an outcome is a 400 and changes nothing', async () => {
    const org = await createTestOrg();
    const first = (await start(org, VERIFICATION)).body.data;
    const path = pathOf(first.url);
    const token = path.split('/').pop()!;
    for (const wrong of [
      `/test-provider/verification/${'A'.repeat(43)}`,
      `/test-provider/verification/short`,
      `/test-provider/card-setup/${token}`,
      `/test-provider/accounting-connection/${token}`,
    ]) {
      const res = await page(wrong, { 'accept-language': 'en' });
      assert.equal(res.statusCode, 404, wrong);
      assert.match(res.body, /<h1>Page not found<\/h1>/);
      assert.equal((await form(wrong, { outcome: 'complete' })).statusCode, 404);
    }
    const bad = await form(path, { outcome: 'approve' });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /name="outcome" value="complete"/);
    assert.equal((await sessions(org))[0]!.status, 'open');
    assert.equal(await verification(org), 'pending');
    // Also once completed: the page says how it stands, with 400 for the form.
    await click(path, 'complete');
    const late = await form(path, { outcome: 'approve' });
    assert.equal(late.statusCode, 400);
    assert.equal((await sessions(org))[0]!.status, 'completed');
    // The token never appears in the pay service's log lines.
    assert.ok(!pay.logs().includes(token));
    assert.match(pay.logs(), /\/test-provider\/verification\/\[token\]/);
  });

  it('payouts are held until the verification is completed, then no longer held', async () => {
    const org = await createTestOrg();
    const customerId = (await call(api.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'K' } })).body.data.id;
    const inv = await call(api.app, 'POST', '/v1/invoices?issue=true', {
      key: org.apiKey,
      body: { customerId, lines: [{ description: 'Ydelse', quantity: 1, unitPriceOere: 100_000, vatRateBps: 0, vatExemptionReason: 'ML13' }] },
    });
    assert.equal(inv.status, 201, inv.raw);
    await testDb().db.tx((tx) =>
      bookPayment(tx, api.deps, org.organizationId, inv.body.data.id, { source: 'card', bookingKey: 'start-link-card', amountOere: 50_000, paymentDate: '2026-03-02' }),
    );
    const statuses = async () => (await call(api.app, 'GET', '/v1/settlements', { key: org.apiKey })).body.data.map((s: { status: string }) => s.status);
    assert.deepEqual(await statuses(), ['held']);
    const session = (await start(org, VERIFICATION)).body.data;
    assert.deepEqual(await statuses(), ['held']); // pending is not verified
    await click(pathOf(session.url), 'complete');
    assert.deepEqual(await statuses(), ['paid']); // paid out on 2026-03-03, long past
  });

  it('concurrent first calls open one session: one 201, the others 200 with the same session @cluster', async () => {
    const org = await createTestOrg();
    const answers = await Promise.all(Array.from({ length: 6 }, () => start(org, ACCOUNTING)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 201]);
    for (const a of answers) assert.deepEqual(a.body.data, answers[0]!.body.data);
    assert.equal((await sessions(org)).length, 1);
  });

  it('the database holds one live session per organisation and kind', async () => {
    const org = await createTestOrg();
    await start(org, VERIFICATION);
    await assert.rejects(
      sql()`INSERT INTO start_link_sessions (organization_id, id, kind, token_hash, token_enc, expires_at)
            VALUES (${org.organizationId}, gen_random_uuid(), 'verification', ${sha256('x')}, ${Buffer.from('x')}, now() + interval '1 day')`,
      /start_link_sessions_live/,
    );
  });

  it('needs settings:write: 403 insufficient_scope naming it', async () => {
    const org = await createTestOrg();
    const key = await createTestKey(org, ['settings:read', 'api:discovery']);
    for (const route of ROUTES) {
      const res = await start(org, route, { key });
      assert.equal(res.status, 403, route.path);
      assert.equal(res.body.error.code, 'insufficient_scope');
      assert.match(JSON.stringify(res.body.error.details), /settings:write/);
    }
    assert.equal((await sessions(org)).length, 0);
    assert.equal((await start(org, VERIFICATION, { key: await createTestKey(org, ['settings:write']) })).status, 201);
  });

  it('takes no body ({} is no body), needs an Idempotency-Key, and refuses a body with properties', async () => {
    const org = await createTestOrg();
    const withProps = await start(org, CARD_SETUP, { body: { returnUrl: 'https://example.com' } });
    assert.equal(withProps.status, 400);
    assert.equal(withProps.body.error.code, 'validation_failed');
    const noKey = await start(org, CARD_SETUP, { idempotencyKey: null });
    assert.equal(noKey.status, 400);
    assert.equal(noKey.body.error.code, 'idempotency_key_missing');
    assert.equal((await sessions(org)).length, 0);
    assert.equal((await start(org, CARD_SETUP, { body: {} })).status, 201);
    assert.equal((await start(org, CARD_SETUP)).status, 200);
  });

  it('each organisation has its own sessions: another organisation\'s completion changes nothing here', async () => {
    const a = await createTestOrg({ name: 'A ApS' });
    const b = await createTestOrg({ name: 'B ApS' });
    const sa = (await start(a, VERIFICATION)).body.data;
    const sb = await start(b, VERIFICATION);
    assert.equal(sb.status, 201);
    assert.notEqual(sb.body.data.id, sa.id);
    assert.match((await page(pathOf(sa.url), { 'accept-language': 'en' })).body, /A ApS needs to verify/);
    await click(pathOf(sa.url), 'complete');
    assert.equal(await verification(a), 'verified');
    assert.equal(await verification(b), 'pending');
    const again = await start(b, VERIFICATION);
    assert.deepEqual(again.body.data, sb.body.data);
    assert.equal(again.status, 200);
  });
});
