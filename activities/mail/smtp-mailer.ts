/**
 * Sends mail through the SMTP relay named by SMTP_URL. Every failure leaves as a `MailDeliveryError` that says whether
 * a retry can help, so the workflow retries connection trouble and 4xx replies and records 5xx refusals. Recipients'
 * addresses are personal data: logs carry the Message-ID and the recipient's domain, and server replies quoted in
 * errors and receipts have their addresses cut down to the domain.
 */
import nodemailer, { type NodemailerError, type SendMailOptions } from 'nodemailer';
import { inChildSpan, SpanKind } from '../../services/observability/tracing.ts';
import { addressDomain, MailDeliveryError, redactAddresses, type MailLog, type Mailer, type MailReceipt, type OutgoingMail } from '../../services/mail/mail-port.ts';

export interface SmtpTimeouts {
  connectionMs: number;
  greetingMs: number;
  socketMs: number;
}

// A relay that does not answer within these is treated as down (transient); the workflow tries again later rather
// than holding a step open for minutes.
export const SMTP_TIMEOUTS: SmtpTimeouts = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 30_000 };

// One mailbox, nothing a header parser would read as a list or a group: `a@b.dk, c@d.dk` must not reach two people.
const SINGLE_ADDRESS = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+\.[^\s@<>,;:"()[\]\\]+$/;

/**
 * The message as nodemailer builds it, shared by the SMTP and the file mailer so both produce the same bytes. The
 * envelope is explicit: the recipient is exactly `to`, whatever the headers say.
 */
export function toNodemailerMessage(msg: OutgoingMail): SendMailOptions {
  if (!SINGLE_ADDRESS.test(msg.to)) {
    throw new MailDeliveryError('the recipient is not a single e-mail address', { permanent: true, code: 'EENVELOPE' });
  }
  return {
    from: { name: msg.from.name, address: msg.from.address },
    ...(msg.replyTo === null ? {} : { replyTo: msg.replyTo }),
    to: msg.to,
    envelope: { from: msg.from.address, to: [msg.to] },
    subject: msg.subject,
    text: msg.text,
    html: msg.html,
    attachments: msg.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
    messageId: msg.messageId,
    ...(msg.headers ? { headers: msg.headers } : {}),
    // Content is always given as bytes; nothing in a message may make the process read a file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

// Failures the operator fixes (credentials, TLS, configuration): the message itself is fine, so once the relay
// settings are corrected the retried send goes through. Recording them as permanent would fail every invoice sent
// while the relay was misconfigured.
const OPERATOR_FIXABLE = new Set(['EAUTH', 'ENOAUTH', 'EOAUTH2', 'ECONFIG', 'ETLS', 'EREQUIRETLS', 'EPROXY']);
// Refused before any reply: an address or message nodemailer cannot send at all; the same message fails every time.
const REFUSED_LOCALLY = new Set(['EENVELOPE', 'EMESSAGE', 'EMAXRECIPIENTS']);

/**
 * RFC 5321: 5yz replies are permanent, 4yz transient. 503 (bad sequence of commands) is a session fault rather than
 * a verdict on the message, so it is retried on a new connection. Anything that never got a reply (refused,
 * reset, timed out, DNS) is transient.
 */
export function toMailDeliveryError(err: unknown): MailDeliveryError {
  if (err instanceof MailDeliveryError) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as NodemailerError;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const smtpCode = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  let permanent: boolean;
  if (code !== undefined && OPERATOR_FIXABLE.has(code)) permanent = false;
  else if (smtpCode !== undefined) permanent = smtpCode >= 500 && smtpCode <= 599 && smtpCode !== 503;
  else permanent = code !== undefined && REFUSED_LOCALLY.has(code);
  const text = err instanceof Error ? err.message : String(err);
  // The original error is not attached as the cause: its message and fields hold the recipient's full address.
  return new MailDeliveryError(redactAddresses(text), { permanent, smtpCode, code });
}

export interface SmtpMailerOptions {
  timeouts?: SmtpTimeouts;
}

/**
 * One connection per message (no pool): nothing stays open between sends, so there is nothing to close at shutdown
 * and a broken connection can never be reused by the next message.
 */
export function createSmtpMailer(smtpUrl: string, log: MailLog, opts: SmtpMailerOptions = {}): Mailer {
  const url = new URL(smtpUrl);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new Error('the SMTP URL must start with smtp:// or smtps://');
  const t = opts.timeouts ?? SMTP_TIMEOUTS;
  // The URL carries host, port, TLS mode (smtps = implicit TLS; smtp upgrades with STARTTLS when offered) and
  // credentials; nodemailer parses it, including query options such as requireTLS=true.
  const transport = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: t.connectionMs,
    greetingTimeout: t.greetingMs,
    socketTimeout: t.socketMs,
    // nodemailer's own logger would write envelopes, i.e. addresses.
    logger: false,
    debug: false,
  });

  return {
    async send(msg: OutgoingMail): Promise<MailReceipt> {
      const fields = { messageId: msg.messageId, toDomain: addressDomain(msg.to) };
      try {
        // A CLIENT span under the step; its attributes name the relay, never an address or the message.
        const info = await inChildSpan(
          'smtp send',
          { kind: SpanKind.CLIENT, attributes: { 'server.address': url.hostname, ...(url.port ? { 'server.port': Number(url.port) } : {}) } },
          () => transport.sendMail(toNodemailerMessage(msg)),
        );
        const accepted = info.accepted.length > 0 && info.rejected.length === 0;
        const response = redactAddresses(info.response);
        log('info', 'mail handed to the SMTP server', { ...fields, accepted, response });
        return { messageId: msg.messageId, accepted, response };
      } catch (err) {
        const failure = toMailDeliveryError(err);
        log('warn', 'mail not sent', { ...fields, permanent: failure.permanent, smtpCode: failure.smtpCode, code: failure.code, error: failure.message });
        throw failure;
      }
    },
  };
}
