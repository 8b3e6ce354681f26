import assert from 'node:assert/strict';
import { createSmtpMailer } from '../../activities/mail/smtp-mailer.ts';
import { giveUpSignInMail, mailSignInLink, recordSignInMail, type SignInMailDeps } from '../../services/pay/portal/deliver-sign-in-mail.ts';
import { requestSignInLink } from '../../services/pay/portal/request-sign-in-link.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { header, onlyLeaf, parseMime } from '../helpers/mime.ts';
import { smtpReply, startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';

/**
 * The sign-in mail's two steps (services/pay/portal/deliver-sign-in-mail.ts, run by the PortalSignInMail workflow)
 * against a real SMTP server on loopback: the mail and its link, the token forgotten once recorded, a repeat that
 * sends nothing, and the links that are not mailed (expired, nobody has the address any more, refused by the server).
 */

describe('portal sign-in mail', () => {
  let t: TestApp;
  let org: TestOrg;
  let sink: SmtpSink;
  let customerId: string;
  const FROM = 'no-reply@faktura.invalid';

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Bager Hansen ApS' });
    sink = await startSmtpSink();
    const res = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'Anne', email: 'Anne@kunde.dk', language: 'en' } });
    customerId = res.body.data.id;
  });
  after(async () => {
    await sink?.close();
    await t?.close();
  });

  const deps = (mailer = createSmtpMailer(sink.url, () => {})): SignInMailDeps => ({ db: testDb().db, keyring: testDb().keyring, mailer, fromAddress: FROM });
  const request = async (email: string) => {
    const { db, keyring } = testDb();
    // The rate limit is the pages' test's business (test/http/customer-portal-pages.test.ts).
    await db.sql`DELETE FROM portal_sign_in_attempts WHERE organization_id = ${org.organizationId}`;
    const out = await db.tx((tx) => requestSignInLink(tx, keyring, {
      organizationId: org.organizationId, email, clientAddress: `c-${Math.random()}`, linkBase: 'https://bager.portal.test/sign-in', language: 'da',
    }));
    assert.equal(out.kind, 'granted');
    return (out as { linkId?: string }).linkId;
  };
  const row = async (id: string) =>
    (await testDb().db.sql<{ token_enc: Buffer | null; mail_outcome: string | null; mailed_at: Date | null }[]>`
      SELECT token_enc, mail_outcome, mailed_at FROM portal_sign_in_links WHERE id = ${id}`)[0]!;
  const wake = async (id: string) => (await testDb().db.sql`SELECT 1 FROM wake_index WHERE service = 'PortalSignInMail' AND key = ${id}`).length;

  it('mails the link to the stored address in the customer\'s language; recording forgets the token and the wake-index row; a repeat sends nothing', async () => {
    // The blind index is exact: an address stored with capitals in its local part is found with them, not in lower case.
    assert.equal(await request('anne@kunde.dk'), undefined);
    // The domain's case does not matter.
    const id = (await request('  Anne@KUNDE.dk '))!;
    const before = sink.received.length;
    const token = testDb().keyring.decrypt((await row(id)).token_enc!);
    const attempt = await mailSignInLink(deps(), id);
    assert.deepEqual(attempt, { kind: 'mailed', messageId: `portal-sign-in.${id}@faktura.invalid` });
    assert.equal(sink.received.length, before + 1);
    const mail = parseMime(sink.received.at(-1)!);
    // The stored address, not the typed one.
    assert.equal(header(mail, 'to'), 'Anne@kunde.dk');
    assert.equal(header(mail, 'subject'), "Your sign-in link for Bager Hansen ApS's customer portal");
    assert.equal(header(mail, 'message-id'), `<portal-sign-in.${id}@faktura.invalid>`);
    assert.equal(header(mail, 'auto-submitted'), 'auto-generated');
    assert.match(onlyLeaf(mail, 'text/plain').body.toString('utf8'), new RegExp(`https://bager\\.portal\\.test/sign-in/${token}\\r\\n`));

    assert.deepEqual(await recordSignInMail(testDb().db, id, attempt), { status: 'mailed' });
    const after = await row(id);
    assert.equal(after.token_enc, null);
    assert.equal(after.mail_outcome, 'mailed');
    assert.ok(after.mailed_at instanceof Date);
    assert.equal(await wake(id), 0);
    // The workflow runs again (a poke after the fact): nothing left to send.
    assert.deepEqual(await mailSignInLink(deps(), id), { kind: 'settled' });
    assert.equal(sink.received.length, before + 1);
    assert.deepEqual(await mailSignInLink(deps(), 'not-an-id'), { kind: 'settled' });
  });

  it('an unknown address makes no link at all', async () => {
    assert.equal(await request('ukendt@kunde.dk'), undefined);
  });

  it('a link that expired before it could be mailed is not sent', async () => {
    const id = (await request('Anne@kunde.dk'))!;
    await testDb().db.sql`UPDATE portal_sign_in_links SET expires_at = now() - interval '1 second' WHERE id = ${id}`;
    const before = sink.received.length;
    const attempt = await mailSignInLink(deps(), id);
    assert.deepEqual(attempt, { kind: 'not_sent', outcome: 'expired' });
    assert.equal(sink.received.length, before);
    assert.deepEqual(await recordSignInMail(testDb().db, id, attempt), { status: 'expired' });
    assert.deepEqual({ ...(await row(id)) }, { token_enc: null, mail_outcome: 'expired', mailed_at: null });
  });

  it('a server\'s permanent refusal is recorded, a transient one retried; retries run out: the token is forgotten all the same', async () => {
    const refusing = await startSmtpSink({ onRcptTo: (_a, _s, cb) => cb(smtpReply(550, '5.1.1 Recipient address rejected')) });
    const busy = await startSmtpSink({ onRcptTo: (_a, _s, cb) => cb(smtpReply(451, '4.7.1 try again later')) });
    try {
      const refused = (await request('Anne@kunde.dk'))!;
      assert.deepEqual(await mailSignInLink(deps(createSmtpMailer(refusing.url, () => {})), refused), { kind: 'not_sent', outcome: 'refused' });

      const retried = (await request('Anne@kunde.dk'))!;
      await assert.rejects(mailSignInLink(deps(createSmtpMailer(busy.url, () => {})), retried), { name: 'MailDeliveryError', permanent: false });
      assert.notEqual((await row(retried)).token_enc, null, 'kept for the next try');
      assert.deepEqual(await giveUpSignInMail(testDb().db, retried), { status: 'failed' });
      assert.deepEqual({ ...(await row(retried)) }, { token_enc: null, mail_outcome: 'failed', mailed_at: null });
      assert.equal(await wake(retried), 0);
    } finally {
      await refusing.close();
      await busy.close();
    }
  });

  it('nobody has the address any more: not sent', async () => {
    const id = (await request('Anne@kunde.dk'))!;
    const res = await call(t.app, 'PATCH', `/v1/customers/${customerId}`, { key: org.apiKey, body: { email: 'ny@kunde.dk' } });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(await mailSignInLink(deps(), id), { kind: 'not_sent', outcome: 'no_recipient' });
  });
});
