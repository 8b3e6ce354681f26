import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailer } from '../../activities/mail/create-mailer.ts';
import { createFileMailer, fileSafeMessageId } from '../../activities/mail/file-mailer.ts';
import { MailDeliveryError, mailMessageId, redactAddresses, type OutgoingMail } from '../../services/mail/mail-port.ts';
import { readConfig } from '../../services/shared/config.ts';
import { header, onlyLeaf, parseMime } from '../helpers/mime.ts';

const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(2048)]);

const mail = (messageId: string): OutgoingMail => ({
  from: { name: 'Bager Hansen ApS', address: 'no-reply@faktura.invalid' },
  replyTo: 'bogholderi@bager.dk',
  to: 'ida@kunde.dk',
  subject: 'Faktura 17 fra Bager Hansen ApS',
  html: '<p>Faktura 17</p>',
  text: 'Faktura 17',
  attachments: [{ filename: 'faktura-17.pdf', contentType: 'application/pdf', content: pdf }],
  messageId,
});

describe('file mailer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'faktura-mail-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const at = (iso: string) => () => new Date(iso);
  const id = 'inv-17.invoice.1@faktura.invalid';

  it('writes one RFC 5322 file per Message-ID, named by time and Message-ID, that parses with its attachment', async () => {
    const lines: string[] = [];
    const mailer = createFileMailer(join(dir, 'mail'), (_l, msg, f) => lines.push(`${msg} ${JSON.stringify(f)}`), { now: at('2026-01-15T10:30:00.123Z') });
    const receipt = await mailer.send(mail(id));
    const name = '2026-01-15T10-30-00-123Z-inv-17.invoice.1_40faktura.invalid.eml';
    assert.deepEqual(receipt, { messageId: id, accepted: true, response: 'stored', storedAt: join(dir, 'mail', name) });
    assert.deepEqual(readdirSync(join(dir, 'mail')), [name]);

    const raw = readFileSync(join(dir, 'mail', name));
    assert.ok(raw.includes('\r\n\r\n'), 'header and body are separated by CRLF CRLF');
    assert.ok(!/[^\r]\n/.test(raw.toString('latin1')), 'every line ends in CRLF');
    const msg = parseMime(raw);
    assert.equal(header(msg, 'From'), 'Bager Hansen ApS <no-reply@faktura.invalid>');
    assert.equal(header(msg, 'To'), 'ida@kunde.dk');
    assert.equal(header(msg, 'Reply-To'), 'bogholderi@bager.dk');
    assert.equal(header(msg, 'Subject'), 'Faktura 17 fra Bager Hansen ApS');
    assert.equal(header(msg, 'Message-ID'), `<${id}>`);
    assert.equal(header(msg, 'MIME-Version'), '1.0');
    assert.equal(onlyLeaf(msg, 'text/plain').body.toString('utf8'), 'Faktura 17');
    assert.equal(onlyLeaf(msg, 'text/html').body.toString('utf8'), '<p>Faktura 17</p>');
    assert.ok(onlyLeaf(msg, 'application/pdf').body.equals(pdf));

    assert.equal(lines.length, 1);
    assert.ok(!lines[0]!.includes('ida@'), lines[0]);
  });

  it('keeps the first file when the same Message-ID is sent again, later or at the same time', async () => {
    const first = await createFileMailer(dir, () => {}, { now: at('2026-01-15T10:30:00.000Z') }).send(mail(id));
    const before = readFileSync(first.storedAt!);
    // A later process (after a crash and a retried step) finds the file rather than writing a second one.
    const again = await createFileMailer(dir, () => {}, { now: at('2026-01-15T11:00:00.000Z') }).send(mail(id));
    assert.equal(again.storedAt, first.storedAt);
    assert.equal(again.accepted, true);
    assert.equal(again.response, 'already stored');
    assert.ok(readFileSync(first.storedAt!).equals(before));

    const mailer = createFileMailer(dir, () => {});
    const [a, b] = await Promise.all([mailer.send(mail('other.1@faktura.invalid')), mailer.send(mail('other.1@faktura.invalid'))]);
    assert.equal(a.storedAt, b.storedAt);
    assert.equal(readdirSync(dir).length, 2);
    assert.deepEqual(readdirSync(dir).filter((n) => !n.endsWith('.eml')), []);
  });

  it('does not take a Message-ID that ends like another for the same message', async () => {
    const mailer = createFileMailer(dir, () => {}, { now: at('2026-01-15T10:30:00.000Z') });
    await mailer.send(mail('x-1@faktura.invalid'));
    await mailer.send(mail('1@faktura.invalid'));
    await mailer.send(mail('x_1@faktura.invalid'));
    assert.equal(readdirSync(dir).length, 3);
  });

  it('maps Message-IDs to file names one to one and keeps long ones short', () => {
    assert.equal(fileSafeMessageId('a.b-c@d.dk'), 'a.b-c_40d.dk');
    assert.notEqual(fileSafeMessageId('a_40b'), fileSafeMessageId('a@b'));
    assert.equal(fileSafeMessageId('a/ø'), 'a_2F_C3_B8');
    const long = fileSafeMessageId(`${'x'.repeat(300)}@d.dk`);
    assert.equal(long.length, 120 + 1 + 32);
    assert.notEqual(long, fileSafeMessageId(`${'x'.repeat(301)}@d.dk`));
  });

  it('refuses a recipient list as a permanent failure and writes nothing', async () => {
    const mailer = createFileMailer(dir, () => {});
    await assert.rejects(mailer.send({ ...mail(id), to: 'ida@kunde.dk, ole@andet.dk' }), (err: unknown) => {
      assert.ok(err instanceof MailDeliveryError);
      assert.equal(err.permanent, true);
      return true;
    });
    assert.deepEqual(readdirSync(dir), []);
  });

  it('reports a directory it cannot write as a transient failure', async () => {
    // A file where the mail directory's parent should be: mkdir fails, as on a read-only or broken disk.
    writeFileSync(join(dir, 'blocked'), '');
    const mailer = createFileMailer(join(dir, 'blocked', 'mail'), () => {});
    await assert.rejects(mailer.send(mail(id)), (err: unknown) => {
      assert.ok(err instanceof MailDeliveryError);
      assert.equal(err.permanent, false);
      assert.equal(err.code, 'ENOTDIR');
      return true;
    });
  });
});

describe('mailer choice', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'faktura-data-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps mail under DATA_DIR/mail without SMTP_URL and says where, once', async () => {
    const lines: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
    const mailer = createMailer({ smtpUrl: undefined, dataDir }, (_l, msg, fields) => lines.push({ msg, fields }));
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0]!.fields, { mailDir: join(dataDir, 'mail') });
    assert.match(lines[0]!.msg, /SMTP_URL is unset/);
    const receipt = await mailer.send(mail(id()));
    assert.equal(receipt.storedAt!.startsWith(join(dataDir, 'mail') + '/'), true);
    assert.equal(readdirSync(join(dataDir, 'mail')).length, 1);
  });

  it('uses SMTP when SMTP_URL is set, logging the host but not the credentials', () => {
    const lines: string[] = [];
    createMailer({ smtpUrl: 'smtps://mailer:s3cret@smtp.example.dk:465', dataDir }, (_l, msg, f) => lines.push(`${msg} ${JSON.stringify(f)}`));
    assert.deepEqual(lines, ['mail goes out through SMTP {"smtp":"smtps://smtp.example.dk:465"}']);
    assert.deepEqual(readdirSync(dataDir), []);
  });

  function id(): string {
    return mailMessageId('inv-1.invoice.1', 'no-reply@faktura.invalid');
  }
});

describe('mail configuration and helpers', () => {
  it('reads SMTP_URL and MAIL_FROM_ADDRESS with their defaults', () => {
    const dflt = readConfig({});
    assert.equal(dflt.smtpUrl, undefined);
    assert.equal(dflt.mailFromAddress, 'no-reply@faktura.invalid');
    const set = readConfig({ SMTP_URL: 'smtp://relay.example.dk:587', MAIL_FROM_ADDRESS: 'faktura@example.dk' });
    assert.equal(set.smtpUrl, 'smtp://relay.example.dk:587');
    assert.equal(set.mailFromAddress, 'faktura@example.dk');
  });

  it('refuses an SMTP_URL that is not smtp(s) without echoing its password', () => {
    assert.throws(() => readConfig({ SMTP_URL: 'https://u:s3cret@relay.example.dk' }), (err: Error) => {
      assert.match(err.message, /smtp:\/\/host/);
      assert.ok(!err.message.includes('s3cret'));
      return true;
    });
    assert.throws(() => readConfig({ SMTP_URL: 'relay.example.dk:25' }), /SMTP_URL/);
  });

  it('refuses a MAIL_FROM_ADDRESS with a display name or without a domain', () => {
    assert.throws(() => readConfig({ MAIL_FROM_ADDRESS: 'Faktura <faktura@example.dk>' }), /MAIL_FROM_ADDRESS/);
    assert.throws(() => readConfig({ MAIL_FROM_ADDRESS: 'faktura' }), /MAIL_FROM_ADDRESS/);
  });

  it('derives a Message-ID in the sending domain from a step key', () => {
    assert.equal(mailMessageId('0192f1c2.invoice.1', 'no-reply@faktura.invalid'), '0192f1c2.invoice.1@faktura.invalid');
    assert.throws(() => mailMessageId('a b', 'no-reply@faktura.invalid'), /Message-ID/);
    assert.throws(() => mailMessageId('a', 'no-reply'), /domain/);
  });

  it('cuts addresses in server replies down to their domain', () => {
    assert.equal(redactAddresses('550 5.1.1 <ida.hansen+x@kunde.dk>: rejected; ole@andet.dk too'), '550 5.1.1 <…@kunde.dk>: rejected; …@andet.dk too');
    assert.equal(redactAddresses('250 2.0.0 Ok: queued as 4F1A2'), '250 2.0.0 Ok: queued as 4F1A2');
  });
});
