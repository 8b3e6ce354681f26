/**
 * The one composer of the mails that carry a document (the invoice or credit note, the reminder, the demand letter,
 * the case's påkrav): every kind supplies its words in the document's language (its own module beside this one) and
 * this module lays them out in templates/document.{html,txt}.hbs, with the stored PDF attached and the organisation
 * as the sender's name and as Reply-To. Every value reaches the HTML through Handlebars' escaping (the text body is
 * plain text and is not escaped). A section whose value is null is left out.
 */
import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import type { OutgoingMail } from '../../services/mail/mail-port.ts';

export interface DocumentMailData {
  lang: 'da' | 'en';
  subject: string;
  greeting: string;
  intro: string;
  facts: { label: string; value: string }[];
  /** What happens if the claim is not paid (reminders with a warning, the påkrav). */
  warning: string | null;
  payment: string | null;
  /** The FI-kort +71 line to pay by (docs/bank-payments.md), with its words. */
  fik: string | null;
  paymentCode: string | null;
  paymentLink: { label: string; url: string } | null;
  alreadyPaid: string | null;
  closing: string;
  sellerName: string;
  trackingPixelUrl: string | null;
}

/** The sections a kind may leave out: absent, they are not in the mail. */
type Optional = 'warning' | 'payment' | 'fik' | 'paymentCode' | 'paymentLink' | 'alreadyPaid' | 'trackingPixelUrl';
const LEFT_OUT: Pick<DocumentMailData, Optional> = { warning: null, payment: null, fik: null, paymentCode: null, paymentLink: null, alreadyPaid: null, trackingPixelUrl: null };

// An isolated instance: helpers registered elsewhere cannot change what these templates do. strict: a misspelt
// field fails loudly instead of rendering as nothing.
const hbs = Handlebars.create();
const template = (file: string, escape: boolean) =>
  hbs.compile<DocumentMailData>(readFileSync(new URL(`./templates/${file}`, import.meta.url), 'utf8'), { strict: true, noEscape: !escape });
const renderHtml = template('document.html.hbs', true);
const renderText = template('document.txt.hbs', false);

/** Only web links may sit in href/src; anything else (javascript:, data:) would be a hole in the mail. */
export function webUrl(what: string, raw: string | null): string | null {
  if (raw === null) return null;
  const url = new URL(raw);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`the ${what} must be an http(s) URL`);
  return url.href;
}

/** A line break in a name would end a header (the Subject) early; names come from integrators. */
export const oneLine = (s: string): string => s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();

export interface DocumentMailParts {
  data: Omit<DocumentMailData, Optional> & Partial<Pick<DocumentMailData, Optional>>;
  /** The organisation's e-mail, if any. */
  replyTo: string | null;
  /** The attached PDF's file name. */
  filename: string;
  messageId: string;
}

export function composeDocumentMail(input: DocumentMailInput<unknown>, m: DocumentMailParts): OutgoingMail {
  const data: DocumentMailData = { ...LEFT_OUT, ...m.data };
  return {
    from: { name: data.sellerName, address: input.fromAddress },
    replyTo: m.replyTo,
    to: input.to,
    subject: data.subject,
    html: renderHtml(data),
    text: renderText(data),
    attachments: [{ filename: m.filename, contentType: 'application/pdf', content: input.pdf }],
    messageId: m.messageId,
  };
}

/** What a kind's mail is composed from: its document view, the stored PDF and the addresses. */
export interface DocumentMailInput<View> {
  view: View;
  /** The service's own sending address (MAIL_FROM_ADDRESS); the organisation's name is the display name. */
  fromAddress: string;
  to: string;
  /** The document's stored PDF. */
  pdf: Buffer;
}
