import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import type { ReceiptDocumentView } from '../../services/payments/receipt-document.ts';
import { formatOere } from '../../services/shared/money.ts';
import { logoDataUrl } from '../../services/branding/document-logo.ts';
import { addressLines, formatDate } from './invoice-template.ts';

/**
 * A payment's receipt as self-contained HTML, in the creditor's name (its name, address, CVR and e-mail at the top
 * and in the footer). Formatted here from the view; the template only places strings, each HTML-escaped.
 */

type Language = ReceiptDocumentView['language'];

const TEXTS = {
  da: {
    title: 'Kvittering',
    receivedFrom: 'Modtaget fra',
    attention: 'Att.',
    cvr: 'CVR-nr.',
    email: 'E-mail',
    reference: 'Kvitteringsnr.',
    paymentDate: 'Betalingsdato',
    method: 'Betalingsmåde',
    transaction: 'Transaktions-id',
    invoiceNumber: 'Faktura nr.',
    invoiceDate: 'Fakturadato',
    amountReceived: 'Modtaget beløb',
    invoiceTotal: 'Fakturabeløb',
    sources: { manual: 'Registreret af kreditor', card: 'Betalingskort', mobilepay: 'MobilePay', bank: 'Bankoverførsel' },
    partial: (n: number) => `Delbetaling af faktura nr. ${n}.`,
    paidInFull: (n: number) => `Faktura nr. ${n} er hermed betalt.`,
    surplus: (amount: string, seller: string) => `${amount} overstiger det skyldige beløb og står til gode hos ${seller}.`,
    issuedBy: (seller: string) => `Kvitteringen er udstedt af ${seller}.`,
  },
  en: {
    title: 'Receipt',
    receivedFrom: 'Received from',
    attention: 'Attn.',
    cvr: 'CVR no.',
    email: 'Email',
    reference: 'Receipt no.',
    paymentDate: 'Payment date',
    method: 'Payment method',
    transaction: 'Transaction id',
    invoiceNumber: 'Invoice no.',
    invoiceDate: 'Invoice date',
    amountReceived: 'Amount received',
    invoiceTotal: 'Invoice total',
    sources: { manual: 'Registered by the creditor', card: 'Payment card', mobilepay: 'MobilePay', bank: 'Bank transfer' },
    partial: (n: number) => `Part payment of invoice no. ${n}.`,
    paidInFull: (n: number) => `Invoice no. ${n} is hereby paid.`,
    surplus: (amount: string, seller: string) => `${amount} exceeds the amount due and is held as a credit with ${seller}.`,
    issuedBy: (seller: string) => `This receipt is issued by ${seller}.`,
  },
} as const;


/** What receipt.hbs receives: strings only. */
export interface ReceiptTemplateModel {
  language: Language;
  title: string;
  seller: { name: string; addressLines: string[]; cvr: string | null; email: string | null };
  /** The organisation's logo as a data: URL (the renderer loads nothing from the network); null: none. */
  logo: { src: string } | null;
  buyer: { name: string; contactPerson: string | null; addressLines: string[]; cvr: string | null };
  details: { label: string; value: string }[];
  amounts: { label: string; value: string; main: boolean }[];
  statements: string[];
  footer: string;
  t: Record<'receivedFrom' | 'attention' | 'cvr' | 'email', string>;
}

export function receiptTemplateModel(view: ReceiptDocumentView): ReceiptTemplateModel {
  const lang = view.language;
  const t = TEXTS[lang];
  const money = (oere: number) => formatOere(oere, lang);
  const { payment, invoice, seller } = view;
  const details = [
    // The payment's id is the receipt's number: one receipt per payment, and the integrator's reference to it.
    { label: t.reference, value: view.paymentId },
    { label: t.paymentDate, value: formatDate(payment.paymentDate, lang) },
    { label: t.method, value: t.sources[payment.source] },
    ...(payment.providerPaymentId ? [{ label: t.transaction, value: payment.providerPaymentId }] : []),
    { label: t.invoiceNumber, value: String(invoice.number) },
    { label: t.invoiceDate, value: formatDate(invoice.issueDate, lang) },
  ];
  const statements: string[] = [];
  if (payment.outcome === 'partial') statements.push(t.partial(invoice.number));
  if (payment.outcome === 'paid_in_full') statements.push(t.paidInFull(invoice.number));
  if (payment.surplusOere > 0) statements.push(t.surplus(money(payment.surplusOere), seller.name));
  statements.push(t.issuedBy(seller.name));
  return {
    language: lang,
    title: t.title,
    seller: { name: seller.name, addressLines: addressLines(seller), cvr: seller.cvr, email: seller.email },
    logo: view.logo ? { src: logoDataUrl(view.logo) } : null,
    buyer: { name: view.buyer.name, contactPerson: view.buyer.contactPerson, addressLines: addressLines(view.buyer), cvr: view.buyer.cvr },
    details,
    amounts: [
      { label: t.amountReceived, value: money(payment.amountOere), main: true },
      { label: t.invoiceTotal, value: money(invoice.grossOere), main: false },
    ],
    statements,
    footer: [seller.name, addressLines(seller).join(', '), seller.cvr ? `${t.cvr} ${seller.cvr}` : '', seller.email ?? ''].filter(Boolean).join(' · '),
    t: { receivedFrom: t.receivedFrom, attention: t.attention, cvr: t.cvr, email: t.email },
  };
}

export const RECEIPT_TEMPLATE_URL = new URL('./templates/receipt.hbs', import.meta.url);

const template = Handlebars.create().compile<ReceiptTemplateModel>(readFileSync(RECEIPT_TEMPLATE_URL, 'utf8'), { strict: true });

export function renderReceiptHtml(view: ReceiptDocumentView): string {
  return template(receiptTemplateModel(view));
}
