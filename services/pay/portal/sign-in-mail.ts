import type { OutgoingMail } from '../../mail/mail-port.ts';
import type { Language } from '../texts.ts';
import { PORTAL_TEXTS } from './portal-texts.ts';

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/**
 * The sign-in mail: from the service's own address under the organisation's name, with the one-time link in plain
 * text and HTML. It is never logged (it carries the token); a lost mail is replaced by asking again.
 */
export function signInMail(input: {
  organizationName: string; fromAddress: string; to: string; link: string; language: Language; messageId: string;
}): OutgoingMail {
  const t = PORTAL_TEXTS[input.language];
  const org = input.organizationName;
  const text = [`${t.mailGreeting}`, '', t.mailBody(org), '', input.link, '', t.mailIgnore, '', org].join('\n');
  const html = `<!doctype html><html lang="${input.language}"><body style="font-family:system-ui,sans-serif;line-height:1.5">
<p>${escapeHtml(t.mailGreeting)}</p>
<p>${escapeHtml(t.mailBody(org))}</p>
<p><a href="${escapeHtml(input.link)}">${escapeHtml(t.mailButton)}</a></p>
<p style="word-break:break-all">${escapeHtml(input.link)}</p>
<p>${escapeHtml(t.mailIgnore)}</p>
<p>${escapeHtml(org)}</p>
</body></html>`;
  return {
    from: { name: org, address: input.fromAddress },
    replyTo: null,
    to: input.to,
    subject: t.mailSubject(org),
    html,
    text,
    attachments: [],
    messageId: input.messageId,
    // Nothing to reply to, and no auto-responder should answer a sign-in link.
    headers: { 'Auto-Submitted': 'auto-generated' },
  };
}
