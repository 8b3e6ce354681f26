import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

/** A real SMTP server on loopback that keeps every message it accepts, for the mail activities' tests. */
export interface SmtpSink {
  /** smtp://127.0.0.1:<port>, as SMTP_URL takes it. */
  url: string;
  /** Each accepted message's raw bytes, in the order they arrived. */
  received: Buffer[];
  /** Each accepted message's envelope recipients (RCPT TO), in the same order as `received`. */
  recipients: string[][];
  close(): Promise<void>;
}

/** An SMTP reply a hook can refuse with: 5xx is permanent, 4xx transient, as a mailer must tell them apart. */
export const smtpReply = (code: number, text: string): Error => Object.assign(new Error(text), { responseCode: code });

/**
 * Starts a sink; `onRcptTo` may refuse recipients and `onData` the message (with smtpReply) to provoke the mailer's
 * failure paths (a message `onData` takes is not kept).
 */
export async function startSmtpSink(hooks: Pick<SMTPServerOptions, 'onRcptTo' | 'onData'> = {}): Promise<SmtpSink> {
  const received: Buffer[] = [];
  const recipients: string[][] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onRcptTo: hooks.onRcptTo ?? ((_a, _s, cb) => cb()),
    onData:
      hooks.onData ??
      ((stream, session, cb) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push(Buffer.concat(chunks));
          recipients.push(session.envelope.rcptTo.map((r) => r.address));
          cb();
        });
      }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, received, recipients, close: () => new Promise((r) => server.close(() => r())) };
}
