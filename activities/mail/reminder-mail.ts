/**
 * The e-mail that carries a reminder (payment reminder, rykker, or the demand letter, påkrav): subject and bodies in
 * the document's language, the reminder's PDF attached, the organisation as the sender's name and as Reply-To (as the
 * invoice mail). Its Message-ID is derived from the reminder alone, so a retried send is the same mail.
 */
import { mailMessageId, type OutgoingMail } from '../../services/mail/mail-port.ts';
import type { ReminderDocumentView } from '../../services/reminders/reminder-document.ts';
import { formatOere } from '../../services/shared/money.ts';
import { formatDate } from '../pdf/invoice-template.ts';
import { composeDocumentMail, oneLine, webUrl, type DocumentMailParts, type DocumentMailInput } from './compose-mail.ts';

type Lang = ReminderDocumentView['language'];
type Variant = 'payment_reminder' | 'reminder' | 'demand';

interface Words {
  subject: { payment_reminder: (invoice: number) => string; reminder: (n: number, invoice: number) => string; demand: (n: number, invoice: number) => string };
  fileName: { payment_reminder: (invoice: number) => string; reminder: (n: number, invoice: number) => string; demand: (n: number, invoice: number) => string };
  greeting: (name: string) => string;
  intro: Record<Variant, (invoice: number, seller: string) => string>;
  labels: { invoiceNumber: string; invoiceDate: string; dueDate: string; total: string; deadline: string };
  payment: (reg: string, account: string, invoice: number) => string;
  paymentCode: (code: string) => string;
  fik: (line: string) => string;
  payOnline: string;
  warning: (deadline: string) => string;
  alreadyPaid: string;
  closing: string;
}

const WORDS: Record<Lang, Words> = {
  da: {
    subject: {
      payment_reminder: (i) => `Betalingspåmindelse for faktura nr. ${i}`,
      reminder: (n, i) => `Rykker nr. ${n} for faktura nr. ${i}`,
      demand: (n, i) => `Påkrav: rykker nr. ${n} for faktura nr. ${i}`,
    },
    fileName: {
      payment_reminder: (i) => `betalingspaamindelse-faktura-${i}.pdf`,
      reminder: (n, i) => `rykker-${n}-faktura-${i}.pdf`,
      demand: (n, i) => `paakrav-rykker-${n}-faktura-${i}.pdf`,
    },
    greeting: (name) => `Kære ${name}`,
    intro: {
      payment_reminder: (i, seller) => `Vi kan ikke se, at faktura nr. ${i} fra ${seller} er betalt. Påmindelsen er vedhæftet som PDF.`,
      reminder: (i, seller) => `Vi har endnu ikke modtaget betaling af faktura nr. ${i} fra ${seller}. Rykkeren er vedhæftet som PDF.`,
      demand: (i, seller) => `Vi har fortsat ikke modtaget betaling af faktura nr. ${i} fra ${seller}. Vedhæftet er et påkrav efter inkassolovens § 10.`,
    },
    labels: { invoiceNumber: 'Fakturanummer', invoiceDate: 'Fakturadato', dueDate: 'Oprindelig forfaldsdato', total: 'I alt at betale', deadline: 'Betales senest' },
    payment: (reg, account, i) => `Betal venligst til reg.nr. ${reg}, kontonr. ${account}, og angiv ${i} som reference.`,
    paymentCode: (code) => `Betalingskode: ${code}`,
    fik: (line) => `Betal med FI-kort: ${line}`,
    payOnline: 'Betal online',
    warning: (deadline) =>
      `Er beløbet ikke betalt senest ${deadline}, overdrages kravet til inkasso. Det medfører yderligere omkostninger for dig, herunder inkassogebyr efter rentelovens § 9 b, stk. 3.`,
    alreadyPaid: 'Har du allerede betalt, kan du se bort fra denne mail.',
    closing: 'Med venlig hilsen',
  },
  en: {
    subject: {
      payment_reminder: (i) => `Payment reminder for invoice no. ${i}`,
      reminder: (n, i) => `Reminder no. ${n} for invoice no. ${i}`,
      demand: (n, i) => `Demand for payment: reminder no. ${n} for invoice no. ${i}`,
    },
    fileName: {
      payment_reminder: (i) => `payment-reminder-invoice-${i}.pdf`,
      reminder: (n, i) => `reminder-${n}-invoice-${i}.pdf`,
      demand: (n, i) => `demand-for-payment-reminder-${n}-invoice-${i}.pdf`,
    },
    greeting: (name) => `Dear ${name}`,
    intro: {
      payment_reminder: (i, seller) => `According to our records, invoice no. ${i} from ${seller} has not been paid. The reminder is attached as a PDF.`,
      reminder: (i, seller) => `We have not yet received payment of invoice no. ${i} from ${seller}. The reminder is attached as a PDF.`,
      demand: (i, seller) => `We have still not received payment of invoice no. ${i} from ${seller}. Attached is a demand for payment under section 10 of the Danish Debt Collection Act.`,
    },
    labels: { invoiceNumber: 'Invoice number', invoiceDate: 'Invoice date', dueDate: 'Original due date', total: 'Total to pay', deadline: 'Pay by' },
    payment: (reg, account, i) => `Please pay to bank reg. no. ${reg}, account no. ${account}, with reference ${i}.`,
    paymentCode: (code) => `Payment code: ${code}`,
    fik: (line) => `Pay by FI card (giro): ${line}`,
    payOnline: 'Pay online',
    warning: (deadline) =>
      `If the amount is not paid by ${deadline}, the claim will be handed over to debt collection. This will add further costs for you, including a collection fee under section 9 b(3) of the Danish Interest Act.`,
    alreadyPaid: 'If you have already paid, please disregard this mail.',
    closing: 'Kind regards',
  },
};

/** `reminder-<id>@<the sending domain>`: one Message-ID per reminder, the same on every retried send. */
export const reminderMessageId = (reminderId: string, fromAddress: string): string => mailMessageId(`reminder-${reminderId}`, fromAddress);

export type ReminderMailInput = DocumentMailInput<ReminderDocumentView>;

export function composeReminderMail(input: ReminderMailInput): OutgoingMail {
  const { view } = input;
  const lang = view.language;
  const w = WORDS[lang];
  const sellerName = oneLine(view.seller.name);
  const i = view.invoice.number;
  const variant: Variant = view.demandLetter ? 'demand' : view.type;
  const n = view.reminderNumber;
  if (variant !== 'payment_reminder' && n === null) throw new Error('a reminder needs its number');
  const subject = variant === 'payment_reminder' ? w.subject.payment_reminder(i) : w.subject[variant](n!, i);
  const fileName = variant === 'payment_reminder' ? w.fileName.payment_reminder(i) : w.fileName[variant](n!, i);
  const deadline = formatDate(view.deadline, lang);
  const { bankReg, bankAccount } = view.seller;
  const url = webUrl('payment link', view.paymentLink?.url ?? null);

  const data: DocumentMailParts['data'] = {
    lang,
    subject,
    greeting: `${w.greeting(view.buyer.contactPerson ?? view.buyer.name)},`,
    intro: w.intro[variant](i, sellerName),
    facts: [
      { label: w.labels.invoiceNumber, value: String(i) },
      { label: w.labels.invoiceDate, value: formatDate(view.invoice.issueDate, lang) },
      { label: w.labels.dueDate, value: formatDate(view.invoice.dueDate, lang) },
      { label: w.labels.total, value: formatOere(view.totalOere, lang) },
      { label: w.labels.deadline, value: deadline },
    ],
    warning: view.demandLetter ? w.warning(deadline) : null,
    payment: bankReg !== null && bankAccount !== null ? w.payment(bankReg, bankAccount, i) : null,
    fik: view.fik ? w.fik(view.fik.line) : null,
    paymentCode: view.paymentLink ? w.paymentCode(view.paymentLink.paymentCode) : null,
    paymentLink: url === null ? null : { label: w.payOnline, url },
    alreadyPaid: w.alreadyPaid,
    closing: w.closing,
    sellerName,
  };
  return composeDocumentMail(input, { data, replyTo: view.seller.email, filename: fileName, messageId: reminderMessageId(view.reminderId, input.fromAddress) });
}
