import { resolve } from 'node:path';
import type { Config } from '../../services/shared/config.ts';
import type { MailLog, Mailer } from '../../services/mail/mail-port.ts';
import { createFileMailer } from './file-mailer.ts';
import { createSmtpMailer } from './smtp-mailer.ts';

/**
 * SMTP when SMTP_URL is set; otherwise mail stays on this machine as .eml files under DATA_DIR/mail, and the one log
 * line at start says where, because nothing reaches a real inbox.
 */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'dataDir'>, log: MailLog): Mailer {
  if (config.smtpUrl) {
    const url = new URL(config.smtpUrl);
    // Host and port only: the URL's user and password stay out of the log.
    log('info', 'mail goes out through SMTP', { smtp: `${url.protocol}//${url.host}` });
    return createSmtpMailer(config.smtpUrl, log);
  }
  const dir = resolve(config.dataDir, 'mail');
  log('info', `SMTP_URL is unset: mail is not sent but kept as .eml files in ${dir}`, { mailDir: dir });
  return createFileMailer(dir, log);
}
