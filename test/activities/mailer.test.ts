import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { SMTPServerOptions } from 'smtp-server';
import { createSmtpMailer, toMailDeliveryError } from '../../activities/mail/smtp-mailer.ts';
import { MailDeliveryError, type MailLog, type OutgoingMail } from '../../services/mail/mail-port.ts';
import { header, onlyLeaf, parseMime } from '../helpers/mime.ts';
import { smtpReply, startSmtpSink } from '../helpers/smtp-sink.ts';

/** Reads the whole message, then answers the end of DATA with this reply instead of 250. */
const replyAfterData =
  (code: number, text: string): NonNullable<SMTPServerOptions['onData']> =>
  (stream, _session, cb) => {
    stream.resume();
    stream.on('end', () => cb(smtpReply(code, text)));
  };

function collectLog(): { log: MailLog; lines: string[] } {
  const lines: string[] = [];
  return { lines, log: (level, msg, fields) => lines.push(JSON.stringify({ level, msg, ...fields })) };
}

const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(4096), Buffer.from('\n%%EOF\n')]);

const mail = (over: Partial<OutgoingMail> = {}): OutgoingMail => ({
  from: { name: 'Bager Høj & Søn ApS', address: 'no-reply@faktura.invalid' },
  replyTo: 'bogholderi@bager.dk',
  to: 'ida@kunde.dk',
  subject: 'Faktura 17 fra Bager Høj & Søn ApS',
  html: '<p>Hej</p><img src="https://t.example/p/abc.gif" width="1" height="1" alt="">',
  text: 'Hej\nfaktura 17',
  attachments: [{ filename: 'faktura-17.pdf', contentType: 'application/pdf', content: pdf }],
  messageId: '0192f1c2-7d3e-7a00-8000-000000000017.invoice.1@faktura.invalid',
  ...over,
});

async function rejection(p: Promise<unknown>): Promise<MailDeliveryError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof MailDeliveryError, `expected a MailDeliveryError, got ${String(err)}`);
    return err;
  }
  assert.fail('the send did not fail');
}

describe('SMTP mailer', () => {
  it('delivers sender name, Reply-To, subject, Message-ID, text, HTML with the pixel and the PDF byte for byte', async () => {
    const sink = await startSmtpSink();
    try {
      const { log, lines } = collectLog();
      const receipt = await createSmtpMailer(sink.url, log).send(mail());
      assert.equal(receipt.messageId, mail().messageId);
      assert.equal(receipt.accepted, true);
      assert.match(receipt.response, /^250 /);
      assert.equal(receipt.storedAt, undefined);
      assert.equal(sink.received.length, 1);

      const msg = parseMime(sink.received[0]!);
      // Non-ASCII names travel as an encoded word; decoded, the display name is exactly the organisation's.
      assert.equal(header(msg, 'From'), 'Bager Høj & Søn ApS <no-reply@faktura.invalid>');
      assert.equal(header(msg, 'Reply-To'), 'bogholderi@bager.dk');
      assert.equal(header(msg, 'To'), 'ida@kunde.dk');
      assert.equal(header(msg, 'Subject'), 'Faktura 17 fra Bager Høj & Søn ApS');
      assert.equal(header(msg, 'Message-ID'), `<${mail().messageId}>`);
      assert.equal(msg.contentType, 'multipart/mixed');
      assert.equal(onlyLeaf(msg, 'text/plain').body.toString('utf8').replace(/\r\n/g, '\n'), 'Hej\nfaktura 17');
      assert.match(onlyLeaf(msg, 'text/html').body.toString('utf8'), /<img src="https:\/\/t\.example\/p\/abc\.gif" width="1" height="1" alt="">/);
      const attachment = onlyLeaf(msg, 'application/pdf');
      assert.match(header(attachment, 'Content-Disposition') ?? '', /^attachment; filename="?faktura-17\.pdf"?$/);
      assert.ok(attachment.body.equals(pdf), 'the attachment bytes differ from the PDF given');

      // Personal data: the log names the message and the recipient's domain, never the address.
      assert.equal(lines.length, 1);
      assert.ok(!lines.join('\n').includes('ida@'), lines.join('\n'));
      assert.match(lines[0]!, /"toDomain":"kunde\.dk"/);
      assert.match(lines[0]!, /"messageId":"0192f1c2-7d3e-7a00-8000-000000000017\.invoice\.1@faktura\.invalid"/);
    } finally {
      await sink.close();
    }
  });

  it('sends a retried message with the same Message-ID, quotes a name with a comma, and leaves out a missing Reply-To', async () => {
    const sink = await startSmtpSink();
    try {
      const mailer = createSmtpMailer(sink.url, () => {});
      const once = mail({ replyTo: null, from: { name: 'Hansen, Jensen & Co', address: 'no-reply@faktura.invalid' } });
      await mailer.send(once);
      await mailer.send(once);
      assert.equal(sink.received.length, 2);
      const [a, b] = sink.received.map((raw) => parseMime(raw));
      assert.equal(header(a!, 'Message-ID'), `<${mail().messageId}>`);
      assert.equal(header(b!, 'Message-ID'), `<${mail().messageId}>`);
      assert.equal(header(a!, 'Reply-To'), undefined);
      // Unquoted, the comma would make two addresses of the organisation's name.
      assert.equal(header(a!, 'From'), '"Hansen, Jensen & Co" <no-reply@faktura.invalid>');
    } finally {
      await sink.close();
    }
  });

  it('reports a recipient refused with 550 as permanent, with the address cut to its domain', async () => {
    const sink = await startSmtpSink({ onRcptTo: (a, _s, cb) => cb(smtpReply(550, `5.1.1 <${a.address}>: Recipient address rejected`)) });
    try {
      const { log, lines } = collectLog();
      const err = await rejection(createSmtpMailer(sink.url, log).send(mail()));
      assert.equal(err.permanent, true);
      assert.equal(err.smtpCode, 550);
      assert.equal(err.code, 'EENVELOPE');
      assert.match(err.message, /550 5\.1\.1 <…@kunde\.dk>: Recipient address rejected/);
      assert.ok(!err.message.includes('ida@'));
      assert.equal(err.cause, undefined);
      assert.equal(sink.received.length, 0);
      assert.equal(lines.length, 1);
      assert.ok(!lines[0]!.includes('ida@'), lines[0]);
      assert.match(lines[0]!, /"level":"warn".*"permanent":true,"smtpCode":550/);
    } finally {
      await sink.close();
    }
  });

  const afterData: [number, string, boolean][] = [
    [554, '5.7.1 Message rejected', true],
    [451, '4.3.0 Temporary local problem, try again later', false],
  ];
  for (const [code, text, permanent] of afterData) {
    it(`reports ${code} at the end of DATA as ${permanent ? 'permanent' : 'transient'}`, async () => {
      const sink = await startSmtpSink({ onData: replyAfterData(code, text) });
      try {
        const err = await rejection(createSmtpMailer(sink.url, () => {}).send(mail()));
        assert.equal(err.permanent, permanent);
        assert.equal(err.smtpCode, code);
        assert.equal(err.code, 'EMESSAGE');
      } finally {
        await sink.close();
      }
    });
  }

  it('reports a closed port as transient', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const err = await rejection(createSmtpMailer(`smtp://127.0.0.1:${port}`, () => {}).send(mail()));
    assert.equal(err.permanent, false);
    assert.equal(err.smtpCode, undefined);
    assert.equal(err.code, 'ESOCKET');
    assert.match(err.message, /ECONNREFUSED/);
  });

  it('reports a server that never greets as transient once the greeting timeout passes', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (silent.address() as AddressInfo).port;
      const mailer = createSmtpMailer(`smtp://127.0.0.1:${port}`, () => {}, { timeouts: { connectionMs: 1000, greetingMs: 200, socketMs: 1000 } });
      const err = await rejection(mailer.send(mail()));
      assert.equal(err.permanent, false);
      assert.equal(err.code, 'ETIMEDOUT');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('refuses a recipient that is not one address, before connecting', async () => {
    // The API stores any e-mail string (docs/api-conventions.md sets only a length); what cannot be a mailbox fails
    // here, for good.
    for (const to of ['ida@kunde.dk, ole@andet.dk', 'not-an-address', 'ida@kunde']) {
      const err = await rejection(createSmtpMailer('smtp://127.0.0.1:9', () => {}).send(mail({ to })));
      assert.equal(err.permanent, true, to);
      assert.equal(err.code, 'EENVELOPE', to);
    }
  });
});

describe('SMTP error classification', () => {
  const nm = (code: string, responseCode?: number): Error => Object.assign(new Error(`${code} failure`), { code, ...(responseCode ? { responseCode } : {}) });
  const cases: [string, Error, boolean][] = [
    ['550 on RCPT', nm('EENVELOPE', 550), true],
    ['552 message too big', nm('EMESSAGE', 552), true],
    ['503 bad sequence (a session fault, not a verdict)', nm('EPROTOCOL', 503), false],
    ['421 service closing', nm('EPROTOCOL', 421), false],
    ['452 mailbox full for now', nm('EENVELOPE', 452), false],
    ['535 bad credentials (the operator fixes them)', nm('EAUTH', 535), false],
    ['missing credentials', nm('ENOAUTH'), false],
    ['TLS certificate refused', nm('ETLS'), false],
    ['DNS failure', nm('EDNS'), false],
    ['connection reset', nm('ECONNECTION'), false],
    ['timeout', nm('ETIMEDOUT'), false],
    ['invalid recipient refused by nodemailer', nm('EENVELOPE'), true],
    ['an error nodemailer did not classify', new Error('something else'), false],
  ];
  for (const [name, err, permanent] of cases) {
    it(`${name} → ${permanent ? 'permanent' : 'transient'}`, () => {
      const mapped = toMailDeliveryError(err);
      assert.equal(mapped.permanent, permanent);
      assert.equal(mapped.smtpCode, (err as { responseCode?: number }).responseCode);
    });
  }
});
