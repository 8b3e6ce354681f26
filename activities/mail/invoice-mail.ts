/**
 * The e-mail that carries an issued invoice or credit note: subject and bodies in the customer's language, the PDF
 * attached, the organisation as the sender's name and as Reply-To. Wording lives in the dictionary below, layout
 * and escaping in the one document-mail composer (compose-mail.ts).
 */
import type { InvoiceDocumentView } from '../../services/invoices/invoice-document.ts';
import type { OutgoingMail } from '../../services/mail/mail-port.ts';
// The PDF's own formatting, so the mail and the attached document show amounts and dates alike.
import { formatOere } from '../../services/shared/money.ts';
import { formatDate } from '../pdf/invoice-template.ts';
import { composeDocumentMail, oneLine, webUrl, type DocumentMailInput, type DocumentMailParts } from './compose-mail.ts';

type Lang = InvoiceDocumentView['language'];

interface Words {
  document: { invoice: string; creditNote: string };
  from: string;
  fileName: { invoice: string; creditNote: string };
  greeting: (name: string) => string;
  intro: { invoice: (n: number, seller: string) => string; creditNote: (n: number, seller: string) => string };
  labels: {
    invoiceNumber: string;
    creditNoteNumber: string;
    date: string;
    amountDue: string;
    dueDate: string;
    credits: string;
    reason: string;
    amountCredited: string;
  };
  creditedInvoice: (n: number, date: string) => string;
  payment: (reg: string, account: string, n: number) => string;
  fik: (line: string) => string;
  paymentCode: (code: string) => string;
  payOnline: string;
  closing: string;
}

const WORDS: Record<Lang, Words> = {
  da: {
    document: { invoice: 'Faktura', creditNote: 'Kreditnota' },
    from: 'fra',
    fileName: { invoice: 'faktura', creditNote: 'kreditnota' },
    greeting: (name) => `Kære ${name}`,
    intro: {
      invoice: (n, seller) => `Hermed faktura ${n} fra ${seller}. Fakturaen er vedhæftet som PDF.`,
      creditNote: (n, seller) => `Hermed kreditnota ${n} fra ${seller}. Kreditnotaen er vedhæftet som PDF.`,
    },
    labels: {
      invoiceNumber: 'Fakturanummer',
      creditNoteNumber: 'Kreditnotanummer',
      date: 'Dato',
      amountDue: 'Beløb til betaling',
      dueDate: 'Forfaldsdato',
      credits: 'Krediterer faktura',
      reason: 'Årsag',
      amountCredited: 'Krediteret beløb',
    },
    creditedInvoice: (n, date) => `${n} af ${date}`,
    payment: (reg, account, n) => `Betal venligst til reg.nr. ${reg}, kontonr. ${account}, og angiv ${n} som reference.`,
    fik: (line) => `Betal med FI-kort: ${line}`,
    paymentCode: (code) => `Betalingskode: ${code}`,
    payOnline: 'Betal fakturaen online',
    closing: 'Med venlig hilsen',
  },
  en: {
    document: { invoice: 'Invoice', creditNote: 'Credit note' },
    from: 'from',
    fileName: { invoice: 'invoice', creditNote: 'credit-note' },
    greeting: (name) => `Dear ${name}`,
    intro: {
      invoice: (n, seller) => `Please find attached invoice ${n} from ${seller} as a PDF.`,
      creditNote: (n, seller) => `Please find attached credit note ${n} from ${seller} as a PDF.`,
    },
    labels: {
      invoiceNumber: 'Invoice number',
      creditNoteNumber: 'Credit note number',
      date: 'Date',
      amountDue: 'Amount due',
      dueDate: 'Due date',
      credits: 'Credits invoice',
      reason: 'Reason',
      amountCredited: 'Amount credited',
    },
    creditedInvoice: (n, date) => `${n} of ${date}`,
    payment: (reg, account, n) => `Please pay to bank reg. no. ${reg}, account no. ${account}, with reference ${n}.`,
    fik: (line) => `Pay by FI card (giro): ${line}`,
    paymentCode: (code) => `Payment code: ${code}`,
    payOnline: 'Pay the invoice online',
    closing: 'Kind regards',
  },
};

export interface InvoiceMailInput extends DocumentMailInput<InvoiceDocumentView> {
  /** The organisation: its name is the sender's display name, its e-mail (if any) the Reply-To. */
  seller: { name: string; email: string | null };
  messageId: string;
  trackingPixelUrl: string | null;
  /** Hosted pay page; invoices only: the invoice's payment link (the view's `paymentLink.url` when it has one). */
  paymentUrl: string | null;
}

export function composeInvoiceMail(input: InvoiceMailInput): OutgoingMail {
  const { view } = input;
  const w = WORDS[view.language];
  const lang = view.language;
  const sellerName = oneLine(input.seller.name);
  const n = view.number;
  const isInvoice = view.kind === 'invoice';
  if (!isInvoice && input.paymentUrl !== null) throw new Error('a credit note has nothing to pay, so it takes no payment link');
  const paymentUrl = webUrl('payment link', input.paymentUrl);
  const subject = `${w.document[view.kind]} ${n} ${w.from} ${sellerName}`;

  const facts: { label: string; value: string }[] = [];
  let payment: string | null = null;
  if (isInvoice) {
    facts.push({ label: w.labels.invoiceNumber, value: String(n) });
    facts.push({ label: w.labels.date, value: formatDate(view.issueDate, lang) });
    facts.push({ label: w.labels.amountDue, value: formatOere(view.grossOere, lang) });
    if (view.dueDate !== null) facts.push({ label: w.labels.dueDate, value: formatDate(view.dueDate, lang) });
    const { bankReg, bankAccount } = view.seller;
    if (bankReg !== null && bankAccount !== null) payment = w.payment(bankReg, bankAccount, n);
  } else {
    facts.push({ label: w.labels.creditNoteNumber, value: String(n) });
    facts.push({ label: w.labels.date, value: formatDate(view.issueDate, lang) });
    if (view.credits !== null) {
      facts.push({ label: w.labels.credits, value: w.creditedInvoice(view.credits.number, formatDate(view.credits.issueDate, lang)) });
      facts.push({ label: w.labels.reason, value: view.credits.reason });
    }
    facts.push({ label: w.labels.amountCredited, value: formatOere(view.grossOere, lang) });
  }

  const data: DocumentMailParts['data'] = {
    lang,
    subject,
    greeting: `${w.greeting(view.buyer.contactPerson ?? view.buyer.name)},`,
    intro: w.intro[view.kind](n, sellerName),
    facts,
    payment,
    fik: isInvoice && view.fik ? w.fik(view.fik.line) : null,
    paymentCode: isInvoice && view.paymentLink ? w.paymentCode(view.paymentLink.paymentCode) : null,
    paymentLink: paymentUrl === null ? null : { label: w.payOnline, url: paymentUrl },
    closing: w.closing,
    sellerName,
    trackingPixelUrl: webUrl('tracking pixel', input.trackingPixelUrl),
  };
  return composeDocumentMail(input, { data, replyTo: input.seller.email, filename: `${w.fileName[view.kind]}-${n}.pdf`, messageId: input.messageId });
}
