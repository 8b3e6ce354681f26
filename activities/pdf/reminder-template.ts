import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import type { ReminderDocumentView } from '../../services/reminders/reminder-document.ts';
import { formatOere } from '../../services/shared/money.ts';
import { addressLines, formatDate } from './invoice-template.ts';
import { COLLECTION_FEE_OERE, DEMAND_WORDS, keep, pieces, type TextPiece } from './text-pieces.ts';
import { logoDataUrl } from '../../services/branding/document-logo.ts';

/**
 * A reminder as self-contained HTML: the free payment reminder, a numbered reminder ("rykker"), or the demand letter
 * (påkrav, Inkassoloven § 10; docs/reminders.md, "The law"), which is a reminder that also warns of debt collection and
 * its costs. One template for all three, Danish or English. Formatted here from the view; the template only places
 * strings, each HTML-escaped.
 */

type Language = ReminderDocumentView['language'];

const TEXTS = {
  da: {
    ...DEMAND_WORDS.da,
    paymentReminder: 'Betalingspåmindelse',
    reminder: (n: number) => `Rykker nr. ${n}`,
    demandLetter: 'Påkrav',
    demandSubtitle: (n: number) => `Rykker nr. ${n} — påkrav efter inkassolovens ${keep('§ 10')}`,
    customer: 'Kunde',
    attention: 'Att.',
    invoiceNumber: 'Fakturanr.',
    invoiceDate: 'Fakturadato',
    dueDate: 'Oprindelig forfaldsdato',
    deadline: 'Ny betalingsfrist',
    intro: {
      payment_reminder: (n: number, date: string, due: string) =>
        `Vi kan ikke se, at vi har modtaget betaling af faktura nr. ${n} af ${date}, som forfaldt til betaling ${due}. Har du allerede betalt, kan du se bort fra denne påmindelse.`,
      reminder: (n: number, date: string, due: string) =>
        `Vi har endnu ikke modtaget betaling af faktura nr. ${n} af ${date}, som forfaldt til betaling ${due}.`,
      demand: (n: number, date: string, due: string) =>
        `Vi har fortsat ikke modtaget betaling af faktura nr. ${n} af ${date}, som forfaldt til betaling ${due}. Dette brev er et påkrav, jf. inkassolovens ${keep('§ 10')}.`,
    },
    principal: 'Resterende fakturabeløb',
    feesBefore: 'Rykkergebyrer tidligere opkrævet',
    fee: { payment_reminder: 'Gebyr for denne påmindelse', reminder: 'Rykkergebyr for denne rykker' },
    paidTowardsFees: 'Betalt af gebyrerne',
    interestBefore: 'Renter tidligere tilskrevet',
    compensationBefore: 'Kompensation tidligere opkrævet',
    interestPiece: (from: string, to: string, rate: string) => `Renter ${from}–${to} (${rate} % p.a., rentelovens § 5)`,
    compensation: 'Kompensation, rentelovens § 9 a, stk. 3',
    feeBasis: 'Rykkergebyret opkræves efter rentelovens § 9 b.',
    warningTitle: 'Påkrav — varsel om inkasso',
    paymentCode: 'Betalingskode',
    fik: 'FI-kort',
    payOnline: 'Betal online',
    paymentHint: 'Angiv fakturanummeret som reference ved betaling.',
  },
  en: {
    ...DEMAND_WORDS.en,
    paymentReminder: 'Payment reminder',
    reminder: (n: number) => `Reminder no. ${n}`,
    demandLetter: 'Demand for payment',
    demandSubtitle: (n: number) => `Reminder no. ${n} — demand under ${keep('section 10')} of the Danish Debt Collection Act`,
    customer: 'Customer',
    attention: 'Attn.',
    invoiceNumber: 'Invoice no.',
    invoiceDate: 'Invoice date',
    dueDate: 'Original due date',
    deadline: 'New payment deadline',
    intro: {
      payment_reminder: (n: number, date: string, due: string) =>
        `According to our records, invoice no. ${n} of ${date}, due on ${due}, has not been paid. If you have already paid, please disregard this reminder.`,
      reminder: (n: number, date: string, due: string) => `We have not yet received payment of invoice no. ${n} of ${date}, which was due on ${due}.`,
      demand: (n: number, date: string, due: string) =>
        `We have still not received payment of invoice no. ${n} of ${date}, which was due on ${due}. This letter is a demand for payment under section 10 of the Danish Debt Collection Act (inkassoloven).`,
    },
    principal: 'Invoice amount outstanding',
    feesBefore: 'Reminder fees charged before',
    fee: { payment_reminder: 'Fee for this reminder', reminder: 'Fee for this reminder' },
    paidTowardsFees: 'Paid towards the fees',
    interestBefore: 'Interest charged before',
    compensationBefore: 'Compensation charged before',
    interestPiece: (from: string, to: string, rate: string) => `Interest ${from}–${to} (${rate} % p.a., section 5 of the Danish Interest Act)`,
    compensation: 'Compensation, section 9 a(3) of the Danish Interest Act',
    feeBasis: 'The reminder fee is charged under section 9 b of the Danish Interest Act (renteloven).',
    warningTitle: 'Demand for payment — notice of debt collection',
    paymentCode: 'Payment code',
    fik: 'FI card',
    payOnline: 'Pay online',
    paymentHint: 'Please state the invoice number as the reference when paying.',
  },
} as const;

/** The reminder's heading: "Rykker nr. 2", "Betalingspåmindelse", "Påkrav". */
export function reminderTitle(view: Pick<ReminderDocumentView, 'type' | 'reminderNumber' | 'demandLetter' | 'language'>): string {
  const t = TEXTS[view.language];
  if (view.type === 'payment_reminder') return t.paymentReminder;
  if (view.reminderNumber === null) throw new Error('a reminder needs its number');
  return view.demandLetter ? t.demandLetter : t.reminder(view.reminderNumber);
}

/**
 * What reminder.hbs receives: strings only. The same template prints a collection case's own påkrav
 * (case-paakrav-template.ts), which names its creditor (`sellerLabel`), lists its debtors instead of the invoice's
 * customer and its claims in a table, and asks for payment after the amounts.
 */
export interface ReminderTemplateModel {
  language: Language;
  title: string;
  subtitle: TextPiece[] | null;
  sellerLabel: string | null;
  seller: { name: string; addressLines: string[]; cvr: string | null; email: string | null };
  /** The organisation's logo as a data: URL (the renderer loads nothing from the network); null: none. */
  logo: { src: string } | null;
  buyer: { name: string; contactPerson: string | null; addressLines: string[]; cvr: string | null } | null;
  debtors: { label: string; list: { name: string; addressLines: string[]; cvr: string | null }[] } | null;
  claims: {
    title: string;
    description: string;
    invoiceDate: string;
    dueDate: string;
    principal: string;
    list: { description: string; invoiceDate: string; dueDate: string; principal: string }[];
  } | null;
  details: { label: string; value: string }[];
  intro: TextPiece[];
  request: TextPiece[];
  amounts: { label: string; value: string; grand: boolean }[];
  feeBasis: string | null;
  warning: { title: string; text: TextPiece[] } | null;
  payment: { label: string; value: string }[];
  paymentHint: string;
  contact: string | null;
  footer: string;
  t: Record<'cvr' | 'email' | 'payment', string> & Partial<Record<'customer' | 'attention', string>>;
}

export function reminderTemplateModel(view: ReminderDocumentView): ReminderTemplateModel {
  if (view.kind !== 'reminder') throw new TypeError(`a view of kind ${String(view.kind)} rendered as reminder`);
  const lang = view.language;
  const t = TEXTS[lang];
  const money = (oere: number): string => formatOere(oere, lang);
  const date = (d: string): string => formatDate(d, lang);
  const dateInText = (d: string): string => keep(date(d));
  const { invoice, seller } = view;
  if (view.demandLetter && view.type !== 'reminder') throw new Error('only a numbered reminder can be the demand letter');

  const amounts: ReminderTemplateModel['amounts'] = [
    { label: t.principal, value: money(view.principalOere), grand: false },
    { label: t.feesBefore, value: money(view.feesBeforeOere), grand: false },
    { label: t.fee[view.type], value: money(view.feeOere), grand: false },
  ];
  // Late-payment interest and the compensation (docs/reminders.md): what was charged before, then this step's own,
  // each interest piece with its days and statutory rate. Rows only where there is something.
  if (view.interestBeforeOere > 0) amounts.push({ label: t.interestBefore, value: money(view.interestBeforeOere), grand: false });
  if (view.compensationBeforeOere > 0) amounts.push({ label: t.compensationBefore, value: money(view.compensationBeforeOere), grand: false });
  for (const piece of view.interest) {
    const rate = (piece.rateBp / 100).toLocaleString(lang === 'da' ? 'da-DK' : 'en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    amounts.push({ label: t.interestPiece(date(piece.fromDate), date(piece.toDate), rate), value: money(piece.amountOere), grand: false });
  }
  if (view.compensationOere > 0) amounts.push({ label: t.compensation, value: money(view.compensationOere), grand: false });
  if (view.paidTowardsFeesOere > 0) amounts.push({ label: t.paidTowardsFees, value: money(-view.paidTowardsFeesOere), grand: false });
  amounts.push({ label: t.total, value: money(view.totalOere), grand: true });

  const payment = paymentRows(lang, { deadline: view.deadline, totalOere: view.totalOere, payee: seller, reference: String(invoice.number) });
  // The invoice's FI-kort line, repeated as the invoice printed it (docs/bank-payments.md).
  if (view.fik) payment.push({ label: t.fik, value: view.fik.line });
  if (view.paymentLink) {
    payment.push({ label: t.paymentCode, value: view.paymentLink.paymentCode });
    if (view.paymentLink.url) payment.push({ label: t.payOnline, value: view.paymentLink.url });
  }

  const introKind = view.demandLetter ? 'demand' : view.type;
  return {
    language: lang,
    title: reminderTitle(view),
    subtitle: view.demandLetter && view.reminderNumber !== null ? pieces(t.demandSubtitle(view.reminderNumber)) : null,
    sellerLabel: null,
    seller: { name: seller.name, addressLines: addressLines(seller), cvr: seller.cvr, email: seller.email },
    logo: view.logo ? { src: logoDataUrl(view.logo) } : null,
    buyer: { name: view.buyer.name, contactPerson: view.buyer.contactPerson, addressLines: addressLines(view.buyer), cvr: view.buyer.cvr },
    debtors: null,
    claims: null,
    details: [
      { label: t.date, value: date(view.sentOn) },
      { label: t.invoiceNumber, value: String(invoice.number) },
      { label: t.invoiceDate, value: date(invoice.issueDate) },
      { label: t.dueDate, value: date(invoice.dueDate) },
      { label: t.deadline, value: date(view.deadline) },
    ],
    intro: pieces(t.intro[introKind](invoice.number, dateInText(invoice.issueDate), dateInText(invoice.dueDate))),
    request: pieces(t.request(dateInText(view.deadline))),
    amounts,
    feeBasis: view.feeOere > 0 ? t.feeBasis : null,
    warning: view.demandLetter ? { title: t.warningTitle, text: pieces(t.warning(dateInText(view.deadline), keep(money(COLLECTION_FEE_OERE)))) } : null,
    payment,
    paymentHint: t.paymentHint,
    contact: seller.email ? t.contact(seller.email) : null,
    footer: [seller.name, addressLines(seller).join(', '), seller.cvr ? `${t.cvr} ${seller.cvr}` : '', seller.email ?? ''].filter(Boolean).join(' · '),
    t: { customer: t.customer, attention: t.attention, cvr: t.cvr, email: t.email, payment: t.payment },
  };
}

export const REMINDER_TEMPLATE_URL = new URL('./templates/reminder.hbs', import.meta.url);

// An isolated Handlebars environment, strict: a field the template names but the model lacks is an error.
const template = Handlebars.create().compile<ReminderTemplateModel>(readFileSync(REMINDER_TEMPLATE_URL, 'utf8'), { strict: true });

export function renderReminderHtml(view: ReminderDocumentView): string {
  return template(reminderTemplateModel(view));
}

/** The payment box of a letter that demands payment: pay by, amount, the bank account where there is one, reference. */
export function paymentRows(
  lang: Language,
  p: { deadline: string; totalOere: number; payee: { bankReg: string | null; bankAccount: string | null }; reference: string },
): ReminderTemplateModel['payment'] {
  const t = DEMAND_WORDS[lang];
  const rows: ReminderTemplateModel['payment'] = [
    { label: t.payBy, value: formatDate(p.deadline, lang) },
    { label: t.amount, value: formatOere(p.totalOere, lang) },
  ];
  if (p.payee.bankReg) rows.push({ label: t.bankReg, value: p.payee.bankReg });
  if (p.payee.bankAccount) rows.push({ label: t.bankAccount, value: p.payee.bankAccount });
  rows.push({ label: t.paymentReference, value: p.reference });
  return rows;
}

/** The demand-letter template (reminder.hbs) with a model built elsewhere: a case's own påkrav. */
export const renderDemandLetterHtml = (model: ReminderTemplateModel): string => template(model);
