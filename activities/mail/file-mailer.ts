/**
 * The mail sink of a developer's machine: each message becomes an RFC 5322 `.eml` file (the bytes an SMTP relay
 * would receive, CRLF line ends) named `<timestamp>-<Message-ID>.eml`, openable in any mail client.
 *
 * A send may run again after a crash, so the Message-ID decides: a message whose file exists is not written again.
 * Files appear whole or not at all (written aside, then renamed), so a crash mid-write never looks like a sent mail.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { MailDeliveryError, type MailLog, type Mailer, type MailReceipt, type OutgoingMail } from '../../services/mail/mail-port.ts';
import { toNodemailerMessage } from './smtp-mailer.ts';

// `2026-01-15T10-30-00-123Z`: ISO time without the characters some file systems refuse; names sort by time.
const TIMESTAMP_LENGTH = 24;
const fileTimestamp = (d: Date): string => d.toISOString().replace(/[:.]/g, '-');

/**
 * The Message-ID as a file name part, one to one: characters outside [A-Za-z0-9.-] become `_` and two hex digits per
 * UTF-8 byte (so `_` itself is always an escape and two ids never share a name). Very long ids keep a prefix and a
 * hash after `~`, a character the escaping never leaves in place.
 */
export function fileSafeMessageId(messageId: string): string {
  const escaped = Array.from(Buffer.from(messageId, 'utf8'))
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9.-]/.test(c) ? c : `_${b.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
  if (escaped.length <= 160) return escaped;
  return `${escaped.slice(0, 120)}~${createHash('sha256').update(messageId).digest('hex').slice(0, 32)}`;
}

export interface FileMailerOptions {
  /** Source of the file name's timestamp; tests pass a fixed clock. */
  now?: () => Date;
}

export function createFileMailer(dir: string, log: MailLog, opts: FileMailerOptions = {}): Mailer {
  const now = opts.now ?? (() => new Date());
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  // Two sends of one Message-ID in this process share one write; across processes the directory check decides.
  const inFlight = new Map<string, Promise<MailReceipt>>();

  const findExisting = async (safeId: string): Promise<string | undefined> => {
    const wanted = `${safeId}.eml`;
    const names = await readdir(dir);
    return names.find((n) => n.length === TIMESTAMP_LENGTH + 1 + wanted.length && n[TIMESTAMP_LENGTH] === '-' && n.endsWith(wanted));
  };

  const store = async (msg: OutgoingMail, safeId: string): Promise<MailReceipt> => {
    const message = toNodemailerMessage(msg);
    await mkdir(dir, { recursive: true });
    const existing = await findExisting(safeId);
    if (existing !== undefined) {
      const storedAt = join(dir, existing);
      log('info', 'mail already kept as a file', { messageId: msg.messageId, storedAt });
      return { messageId: msg.messageId, accepted: true, response: 'already stored', storedAt };
    }
    const info = await composer.sendMail(message);
    const bytes = info.message;
    if (!Buffer.isBuffer(bytes)) throw new Error('the stream transport did not return the message as bytes');
    const name = `${fileTimestamp(now())}-${safeId}.eml`;
    const temp = join(dir, `.${safeId}.${randomUUID()}.tmp`);
    try {
      await writeFile(temp, bytes, { flag: 'wx' });
      await rename(temp, join(dir, name));
    } finally {
      await rm(temp, { force: true });
    }
    const storedAt = join(dir, name);
    log('info', 'mail kept as a file', { messageId: msg.messageId, storedAt });
    return { messageId: msg.messageId, accepted: true, response: 'stored', storedAt };
  };

  return {
    send(msg: OutgoingMail): Promise<MailReceipt> {
      const safeId = fileSafeMessageId(msg.messageId);
      const pending = inFlight.get(safeId);
      if (pending) return pending;
      const p = store(msg, safeId)
        .catch((err: unknown) => {
          if (err instanceof MailDeliveryError) throw err;
          // A full or read-only disk is the machine's problem, not the message's: the step may retry.
          const code = typeof (err as NodeJS.ErrnoException).code === 'string' ? (err as NodeJS.ErrnoException).code : undefined;
          throw new MailDeliveryError(`could not keep the mail as a file: ${err instanceof Error ? err.message : String(err)}`, { permanent: false, code });
        })
        .finally(() => inFlight.delete(safeId));
      inFlight.set(safeId, p);
      return p;
    },
  };
}
