import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../../activities/pdf/chromium-renderer.ts';
import { createEngineClient } from '../../services/shared/engine-client.ts';
import { call, testDb } from '../helpers/context.ts';
import { header, onlyLeaf, parseMime } from '../helpers/mime.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';
import { startScenario, type Invoice, type Scenario } from '../helpers/scenario.ts';

/**
 * A debtor uses the customer portal in a real browser (headless Chromium) at phone size, on the whole stack: the
 * sign-in link is mailed by the PortalSignInMail workflow on a real restate-server through a real SMTP server on
 * loopback, and read from there. Signed in, the debtor sees their invoices and balance, downloads a PDF (the stored
 * document, byte for byte), goes to the pay page for an open invoice, and pauses, resumes and cancels a subscription
 * (the API then reports each status), and signs out.
 */
describe('the customer portal in a browser', function () {
  this.timeout(120_000);
  let s: Scenario;
  let pay: TestPay;
  let browser: Browser;
  let customerId: string;
  let open: Invoice;
  let paid: Invoice;
  let subscriptionId: string;
  const EMAIL = 'anne@kunde.dk';
  // A subdomain of this run's own (the suite shares one database).
  const SUB = `bager-e2e-${Date.now().toString(36)}`;
  const api = (method: string, url: string, body?: unknown) => call(s.api.app, method, url, { key: s.org.apiKey, ...(body !== undefined ? { body } : {}) });

  before(async () => {
    s = await startScenario({ orgName: 'Bager Hansen ApS' });
    pay = await startTestPay({ listen: true, portal: { keyring: testDb().keyring, engine: createEngineClient(s.restate.ingressUrl, testDb().db) } });
    browser = await chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
    customerId = await s.customer({ type: 'person', name: 'Anne Jensen', email: EMAIL, language: 'da' });
    open = await s.issue({ customerId, dueDate: '2031-03-14', lines: [{ description: 'Kagebord', quantity: 1, unitPriceOere: 120_000, vatRateBps: 2500 }] });
    paid = await s.issue({ customerId, dueDate: '2031-03-14', lines: [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4_000, vatRateBps: 2500 }] });
    await s.pay(paid.id, paid.grossOere);
    const sub = await api('POST', '/v1/subscriptions', {
      customerId, name: 'Brødabonnement', interval: { unit: 'month', count: 1 }, startDate: '2096-01-31',
      lines: [{ description: 'Rugbrød', quantity: 4, unitPriceOere: 4_000 }],
    });
    assert.equal(sub.status, 201, sub.raw);
    subscriptionId = sub.body.data.id;
    await testDb().db.sql`
      INSERT INTO customer_portals (organization_id, subdomain, active, subscription_self_service, palette, primary_color)
      VALUES (${s.org.organizationId}, ${SUB}, true, true, 'mint', '#1f7a5c')`;
  });
  after(async () => {
    await browser?.close();
    await pay?.close();
    await s?.close();
  });

  const phone = async (): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'da-DK', hasTouch: true, isMobile: true });
    return context.newPage();
  };
  const noSidewaysScroll = (page: Page) => page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');
  const subscriptionStatus = async () => (await api('GET', `/v1/subscriptions/${subscriptionId}`)).body.data.status as string;

  async function mailedLink(before: number): Promise<{ link: string; raw: string }> {
    const until = Date.now() + 20_000;
    for (;;) {
      const mail = s.mails().slice(before).find((m) => m.includes('portal-sign-in.'));
      if (mail) {
        const root = parseMime(Buffer.from(mail));
        const text = onlyLeaf(root, 'text/plain').body.toString('utf8');
        const link = /(http:\/\/\S+\/sign-in\/[A-Za-z0-9_-]{43})/.exec(text)?.[1];
        assert.ok(link, text);
        return { link, raw: mail };
      }
      if (Date.now() > until) throw new Error('no sign-in mail arrived');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('sign in by e-mail, see invoices and balance, download a PDF, go to the pay page, manage the subscription, sign out', async () => {
    const page = await phone();
    const portal = `${pay.baseUrl}/portal/${SUB}`;

    // Ask for a link.
    await page.goto(portal);
    assert.equal(await page.getAttribute('html', 'lang'), 'da');
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Log ind');
    assert.equal(await page.getAttribute('body', 'class'), 'portal palette-mint');
    const mailsBefore = s.mails().length;
    await page.getByLabel('Din e-mailadresse').fill(EMAIL);
    await page.getByRole('button', { name: 'Send mig et link' }).click();
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Tjek din e-mail');
    assert.match(await page.getByRole('status').innerText(), /Hvis adressen er kendt, er et link til at logge ind på vej/);

    // The mail, through the workflow and the SMTP server.
    const { link, raw } = await mailedLink(mailsBefore);
    const root = parseMime(Buffer.from(raw));
    assert.equal(header(root, 'to'), EMAIL);
    assert.equal(header(root, 'from'), 'Bager Hansen ApS <no-reply@faktura.invalid>');
    assert.equal(header(root, 'subject'), 'Dit link til Bager Hansen ApSs kundeportal');
    assert.ok(link.startsWith(`${portal}/sign-in/`), link);
    assert.match(onlyLeaf(root, 'text/html').body.toString('utf8'), new RegExp(`href="${link}"`));
    await s.settle();
    // Mailed, and the token forgotten: the mail holds the only copy; the wake index is empty again (settle).
    const [row] = await testDb().db.sql<{ token_enc: Buffer | null; mail_outcome: string }[]>`
      SELECT token_enc, mail_outcome FROM portal_sign_in_links WHERE organization_id = ${s.org.organizationId}`;
    assert.deepEqual({ ...row }, { token_enc: null, mail_outcome: 'mailed' });

    // Open the link, confirm.
    await page.goto(link);
    await page.getByRole('button', { name: 'Log ind' }).click();
    await page.waitForURL(`${portal}?lang=da`);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Dine fakturaer');
    assert.equal(await page.getByTestId('outstanding').innerText(), '1.500,00 kr.');
    assert.equal(await page.getByTestId('overdue').innerText(), '0,00 kr.');
    const openList = page.getByTestId('open-invoices');
    assert.match(await openList.innerText(), new RegExp(`Faktura nr\\. ${open.number}[\\s\\S]*Forfaldsdato\\s+14\\. marts 2031[\\s\\S]*Restbeløb\\s+1\\.500,00 kr\\.[\\s\\S]*Status\\s+Åben`));
    assert.match(await page.getByTestId('paid-invoices').innerText(), new RegExp(`Faktura nr\\. ${paid.number}[\\s\\S]*Beløb\\s+100,00 kr\\.[\\s\\S]*Restbeløb\\s+0,00 kr\\.[\\s\\S]*Status\\s+Betalt`));
    assert.equal(await page.getByRole('link', { name: `Betal faktura ${paid.number}` }).count(), 0, 'a paid invoice has no Pay');
    assert.ok(await noSidewaysScroll(page), 'nothing scrolls sideways at 390 px');
    const payBox = await page.getByRole('link', { name: `Betal faktura ${open.number}` }).boundingBox();
    assert.ok(payBox && payBox.height >= 44, JSON.stringify(payBox));

    // The PDF, exactly as stored.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: `Hent faktura ${open.number} (PDF)` }).click(),
    ]);
    assert.equal(download.suggestedFilename(), `faktura-${open.number}.pdf`);
    const bytes = await readFile(await download.path());
    assert.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-');
    const [stored] = await testDb().db.sql<{ content: Buffer }[]>`
      SELECT d.content FROM documents d JOIN invoices i ON i.document_sha256 = d.sha256 WHERE i.id = ${open.id}`;
    assert.ok(bytes.equals(stored!.content), 'the download is the stored document');

    // Pay goes to the pay page of the invoice.
    await page.getByRole('link', { name: `Betal faktura ${open.number}` }).click();
    await page.waitForURL(new RegExp(`^${pay.baseUrl}/p/[0-9a-f]{32}\\?lang=da$`));
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), `Faktura nr. ${open.number}`);
    assert.equal(await page.getByTestId('balance').innerText(), '1.500,00 kr.');
    const link2 = (await api('GET', `/v1/invoices/${open.id}/payment-link`)).body.data as { reference: string };
    assert.equal(new URL(page.url()).pathname, `/p/${link2.reference}`);
    await page.goBack();
    await page.waitForURL(`${portal}?lang=da`);

    // The subscription: pause, resume, cancel; the API reports each.
    const subscriptions = page.getByTestId('subscriptions');
    assert.match(await subscriptions.innerText(), /Brødabonnement[\s\S]*Status\s+Aktivt[\s\S]*Pris pr\. periode\s+200,00 kr\./);
    await page.getByRole('button', { name: 'Sæt Brødabonnement på pause' }).click();
    assert.equal(await page.getByRole('status').innerText(), 'Abonnementet er sat på pause.');
    assert.equal(await subscriptionStatus(), 'paused');
    assert.equal(await page.getByRole('button', { name: 'Sæt Brødabonnement på pause' }).count(), 0);
    await page.getByRole('button', { name: 'Genoptag Brødabonnement' }).click();
    assert.equal(await page.getByRole('status').innerText(), 'Abonnementet er genoptaget.');
    assert.equal(await subscriptionStatus(), 'active');
    await page.getByRole('button', { name: 'Opsig Brødabonnement' }).click();
    assert.equal(await page.getByRole('status').innerText(), 'Abonnementet er opsagt.');
    assert.equal(await subscriptionStatus(), 'cancelled');
    assert.match(await subscriptions.innerText(), /Status\s+Opsagt/);
    assert.equal(await subscriptions.getByRole('button').count(), 0, 'nothing more to do with a cancelled subscription');
    const events = await s.eventTypes();
    for (const type of ['subscription.paused', 'subscription.resumed', 'subscription.cancelled']) assert.ok(events.includes(type), type);
    assert.ok(await noSidewaysScroll(page));

    // In English, then signed out.
    await page.getByRole('link', { name: 'English' }).click();
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Your invoices');
    await page.getByRole('button', { name: 'Sign out' }).click();
    assert.match(await page.getByRole('status').innerText(), /You are signed out/);
    await page.goto(portal);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Log ind');
    // The link was one-time.
    await page.goto(link);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Linket virker ikke');

    // Neither the token nor the address reached the pay service's log.
    const logs = pay.logs();
    assert.ok(!logs.includes(link.split('/').at(-1)!));
    assert.ok(!logs.includes(EMAIL));
    await page.context().close();
  });

  it('without a hand-off to the engine the mail still goes out: the link waits in the wake index for the business clock', async () => {
    const alone = await startTestPay({ listen: true, portal: { keyring: testDb().keyring } });
    try {
      const page = await phone();
      await page.goto(`${alone.baseUrl}/portal/${SUB}`);
      const mailsBefore = s.mails().length;
      await page.getByLabel('Din e-mailadresse').fill(EMAIL);
      await page.getByRole('button', { name: 'Send mig et link' }).click();
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Tjek din e-mail');
      const [pending] = await testDb().db.sql<{ id: string }[]>`
        SELECT id FROM portal_sign_in_links WHERE organization_id = ${s.org.organizationId} AND mail_outcome IS NULL`;
      assert.ok(pending, 'the link waits for its mail');
      assert.equal((await testDb().db.sql`SELECT 1 FROM wake_index WHERE service = 'PortalSignInMail' AND key = ${pending.id}`).length, 1);
      assert.equal(s.mails().length, mailsBefore, 'nothing was sent yet');
      // The organisation's business clock pokes what is due in its wake index (as the housekeeping loop does a minute later).
      await s.advance(1);
      const { link } = await mailedLink(mailsBefore);
      assert.ok(link.startsWith(`${alone.baseUrl}/portal/${SUB}/sign-in/`), link);
      await page.goto(link);
      await page.getByRole('button', { name: 'Log ind' }).click();
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Dine fakturaer');
      await page.context().close();
    } finally {
      await alone.close();
    }
  });
});
