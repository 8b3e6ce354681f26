import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import type { ExemptionReason, InvoiceDocumentView } from '../../services/invoices/invoice-document.ts';
import { formatOere, groupThousands } from '../../services/shared/money.ts';
import { logoDataUrl } from '../../services/branding/document-logo.ts';
import { qrCodeDataUrl } from './qr-code.ts';

/**
 * Invoice and credit note documents as self-contained HTML (Momsbekendtgørelsen § 58; docs/api-conventions.md,
 * "Invoices and credit notes", Seller details).
 *
 * Everything is formatted here, in TypeScript, from the frozen view; the Handlebars template only places strings.
 * It uses `{{ }}` exclusively, so every value (the integrator's and the customer's text included) is HTML-escaped.
 * The HTML loads nothing: styles are inline, fonts come from the system, and the renderer blocks the network anyway.
 */

type Language = InvoiceDocumentView['language'];

const EXEMPTION_WORDING: Record<Language, Record<ExemptionReason, string>> = {
  da: {
    ML13: 'Momsfritaget, jf. momslovens § 13',
    OMVENDT: 'Omvendt betalingspligt',
    EU_VARE: 'Momsfri levering af varer til andet EU-land',
    EKSPORT: 'Eksport uden for EU — momsfritaget',
  },
  en: {
    ML13: 'VAT exempt, cf. section 13 of the Danish VAT Act',
    OMVENDT: 'Reverse charge',
    EU_VARE: 'VAT-exempt supply of goods to another EU country',
    EKSPORT: 'Export outside the EU — VAT exempt',
  },
};

const TEXTS = {
  da: {
    invoice: 'Faktura',
    creditNote: 'Kreditnota',
    invoiceNumber: 'Fakturanr.',
    creditNoteNumber: 'Kreditnotanr.',
    invoiceDate: 'Fakturadato',
    creditNoteDate: 'Dato',
    dueDate: 'Forfaldsdato',
    customerReference: 'Deres reference',
    senderReference: 'Vores reference',
    buyerReference: 'Købers reference',
    orderReference: 'Ordrenr.',
    customer: 'Kunde',
    attention: 'Att.',
    cvr: 'CVR-nr.',
    email: 'E-mail',
    buyerVatNumber: 'Købers momsregistreringsnr.',
    description: 'Beskrivelse',
    quantity: 'Antal',
    unitPrice: 'Enhedspris',
    discount: 'Rabat',
    vatRate: 'Moms',
    amount: 'Beløb ekskl. moms',
    vatBreakdown: 'Momsspecifikation',
    taxableAmount: 'Grundlag',
    vat: 'Moms',
    subtotal: 'I alt ekskl. moms',
    vatTotal: 'Moms i alt',
    invoiceTotal: 'I alt DKK',
    creditNoteTotal: 'Krediteret i alt DKK',
    payment: 'Betaling',
    amountDue: 'Beløb at betale',
    bankReg: 'Reg.nr.',
    bankAccount: 'Kontonr.',
    paymentReference: 'Betalingsreference',
    paymentReferenceHint: 'Angiv fakturanummeret som reference ved betaling.',
    fik: 'FI-kort',
    paymentCode: 'Betalingskode',
    payOnline: 'Betal online',
    scanToPay: 'Scan og betal',
    creditsInvoice: (number: string, date: string) => `Kreditnota til faktura nr. ${number} af ${date}`,
    reason: 'Årsag',
    page: 'Side',
    pageOf: 'af',
  },
  en: {
    invoice: 'Invoice',
    creditNote: 'Credit note',
    invoiceNumber: 'Invoice no.',
    creditNoteNumber: 'Credit note no.',
    invoiceDate: 'Invoice date',
    creditNoteDate: 'Date',
    dueDate: 'Due date',
    customerReference: 'Your reference',
    senderReference: 'Our reference',
    buyerReference: 'Buyer reference',
    orderReference: 'Order no.',
    customer: 'Customer',
    attention: 'Attn.',
    cvr: 'CVR no.',
    email: 'Email',
    buyerVatNumber: "Buyer's VAT reg. no.",
    description: 'Description',
    quantity: 'Quantity',
    unitPrice: 'Unit price',
    discount: 'Discount',
    vatRate: 'VAT',
    amount: 'Amount excl. VAT',
    vatBreakdown: 'VAT breakdown',
    taxableAmount: 'Taxable amount',
    vat: 'VAT',
    subtotal: 'Total excl. VAT',
    vatTotal: 'Total VAT',
    invoiceTotal: 'Total DKK',
    creditNoteTotal: 'Total credited DKK',
    payment: 'Payment',
    amountDue: 'Amount due',
    bankReg: 'Reg. no.',
    bankAccount: 'Account no.',
    paymentReference: 'Payment reference',
    paymentReferenceHint: 'Please state the invoice number as the reference when paying.',
    fik: 'FI card',
    paymentCode: 'Payment code',
    payOnline: 'Pay online',
    scanToPay: 'Scan to pay',
    creditsInvoice: (number: string, date: string) => `Credit note for invoice no. ${number} dated ${date}`,
    reason: 'Reason',
    page: 'Page',
    pageOf: 'of',
  },
} as const;

export const exemptionWording = (reason: ExemptionReason, language: Language): string => EXEMPTION_WORDING[language][reason];


/** 'YYYY-MM-DD' as DD-MM-YYYY (da) or unchanged ISO (en). */
export function formatDate(date: string, language: Language): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) throw new RangeError(`date ${JSON.stringify(date)} is not YYYY-MM-DD`);
  return language === 'da' ? `${m[3]}-${m[2]}-${m[1]}` : date;
}

/** An exact decimal text ("1500.25") with the language's separators ("1.500,25" / "1,500.25"). */
export function formatDecimal(text: string, language: Language): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new RangeError(`quantity ${JSON.stringify(text)} is not a decimal number`);
  const [, sign, whole, fraction] = m;
  const [group, point] = language === 'da' ? ['.', ','] : [',', '.'];
  return `${sign}${groupThousands(whole!, group)}${fraction ? point + fraction : ''}`;
}

/** Basis points as a percentage: 2500 → "25 %" (da) / "25%" (en); 1250 → "12,5 %" / "12.5%". */
export function formatRate(bps: number, language: Language): string {
  if (!Number.isSafeInteger(bps)) throw new RangeError(`VAT rate ${bps} is not whole basis points`);
  const abs = Math.abs(bps);
  const fraction = (abs % 100).toString().padStart(2, '0').replace(/0+$/, '');
  const text = formatDecimal(`${bps < 0 ? '-' : ''}${Math.floor(abs / 100)}${fraction ? `.${fraction}` : ''}`, language);
  return language === 'da' ? `${text} %` : `${text}%`;
}

/**
 * Text placed inside a CSS string in the template's <style>, where HTML escaping does not apply. Only our own
 * labels and the document number go there; anything else is refused rather than escaped.
 */
function cssString(text: string): string {
  if (!/^[\p{L}\p{N} .·]*$/u.test(text)) throw new Error(`${JSON.stringify(text)} is not safe inside a CSS string`);
  return text;
}

/** A party's address as printed lines: street, postal code and city, country; empty parts left out. */
export const addressLines = (p: { street: string | null; postalCode: string | null; city: string | null; country: string | null }): string[] =>
  [p.street, [p.postalCode, p.city].filter(Boolean).join(' '), p.country].filter((l): l is string => !!l);

interface LineModel {
  description: string;
  quantity: string;
  unitPrice: string;
  discount: string;
  vatRate: string;
  net: string;
}

/** What invoice.hbs receives: strings only (and arrays and nulls of them), nothing left to compute. */
export interface InvoiceTemplateModel {
  language: Language;
  title: string;
  /** Printed in the page margin by CSS (`@page`), so it must be a plain CSS string: see cssString. */
  pageLabel: { prefix: string; of: string };
  seller: { name: string; addressLines: string[]; cvr: string | null; email: string | null };
  /** The organisation's logo as a data: URL (the renderer loads nothing from the network); null: none. */
  logo: { src: string } | null;
  buyer: { name: string; contactPerson: string | null; addressLines: string[]; cvr: string | null };
  details: { label: string; value: string }[];
  credits: { reference: string; reason: string } | null;
  heading: string | null;
  message: string | null;
  /** Taxable lines first (no wording), then one group per exemption reason with its wording. */
  groups: { wording: string | null; vatNumber: string | null; lines: LineModel[] }[];
  vatRows: { label: string; vatNumber: string | null; base: string; vat: string }[];
  totals: { label: string; value: string; grand: boolean }[];
  payment: { label: string; value: string }[] | null;
  /** The payment link's URL, the last payment row, in a smaller type so that it stays on one line; null: no link. */
  paymentUrl: { label: string; url: string } | null;
  /** The payment link's QR code (an SVG as a data: URL, qr-code.ts) beside the payment rows; null: no link. */
  paymentQr: { src: string; caption: string } | null;
  paymentHint: string | null;
  footer: string;
  t: Record<'customer' | 'attention' | 'cvr' | 'email' | 'description' | 'quantity' | 'unitPrice' | 'discount' | 'vatRate' | 'amount' | 'vatBreakdown' | 'taxableAmount' | 'vat' | 'payment' | 'reason', string>;
}

export function invoiceTemplateModel(view: InvoiceDocumentView): InvoiceTemplateModel {
  const lang = view.language;
  const t = TEXTS[lang];
  const money = (oere: number): string => formatOere(oere, lang);
  const date = (d: string): string => formatDate(d, lang);
  const isCredit = view.kind === 'creditNote';
  const number = view.number.toString();
  if (!Number.isSafeInteger(view.number) || view.number < 1) throw new RangeError(`document number ${view.number} is not a positive integer`);
  if (isCredit && !view.credits) throw new Error('a credit note must name the invoice it credits');

  // The buyer's VAT number for an intra-EU supply of goods: the only identifier the view has is the CVR.
  const buyerVatNumber = view.buyer.cvr ? `${t.buyerVatNumber}: DK${view.buyer.cvr}` : null;
  const vatNumberFor = (reason: ExemptionReason): string | null => (reason === 'EU_VARE' ? buyerVatNumber : null);

  const line = (l: InvoiceDocumentView['lines'][number]): LineModel => ({
    description: l.description,
    quantity: formatDecimal(l.quantity, lang) + (l.unit ? ` ${l.unit}` : ''),
    unitPrice: money(l.unitPriceOere),
    discount: l.discount === null ? '' : l.discount.type === 'percent' ? formatRate(l.discount.value * 100, lang) : money(l.discountOere),
    vatRate: formatRate(l.vatRateBps, lang),
    net: money(l.netOere),
  });
  const taxable = view.lines.filter((l) => l.vatExemptionReason === null);
  const groups: InvoiceTemplateModel['groups'] = [];
  if (taxable.length > 0) groups.push({ wording: null, vatNumber: null, lines: taxable.map(line) });
  const reasons = [...new Set(view.lines.map((l) => l.vatExemptionReason).filter((r): r is ExemptionReason => r !== null))];
  for (const reason of reasons) {
    groups.push({
      wording: exemptionWording(reason, lang),
      vatNumber: vatNumberFor(reason),
      lines: view.lines.filter((l) => l.vatExemptionReason === reason).map(line),
    });
  }

  const details: { label: string; value: string }[] = [
    { label: isCredit ? t.creditNoteNumber : t.invoiceNumber, value: number },
    { label: isCredit ? t.creditNoteDate : t.invoiceDate, value: date(view.issueDate) },
  ];
  if (!isCredit && view.dueDate) details.push({ label: t.dueDate, value: date(view.dueDate) });
  if (view.customerReference) details.push({ label: t.customerReference, value: view.customerReference });
  if (view.senderReference) details.push({ label: t.senderReference, value: view.senderReference });
  if (view.buyerReference) details.push({ label: t.buyerReference, value: view.buyerReference });
  if (view.orderReference) details.push({ label: t.orderReference, value: view.orderReference });

  let payment: InvoiceTemplateModel['payment'] = null;
  if (!isCredit) {
    payment = [];
    if (view.dueDate) payment.push({ label: t.dueDate, value: date(view.dueDate) });
    payment.push({ label: t.amountDue, value: money(view.grossOere) });
    if (view.seller.bankReg) payment.push({ label: t.bankReg, value: view.seller.bankReg });
    if (view.seller.bankAccount) payment.push({ label: t.bankAccount, value: view.seller.bankAccount });
    payment.push({ label: t.paymentReference, value: number });
    // The FI-kort line as the debtor's bank asks for it (docs/bank-payments.md), and the pay page's link and code.
    if (view.fik) payment.push({ label: t.fik, value: view.fik.line });
    if (view.paymentLink) payment.push({ label: t.paymentCode, value: view.paymentLink.paymentCode });
  }
  const link = !isCredit ? (view.paymentLink ?? null) : null;
  const paymentUrl = link ? { label: t.payOnline, url: link.url } : null;
  const paymentQr = link ? { src: qrCodeDataUrl(link.url), caption: t.scanToPay } : null;

  const title = isCredit ? t.creditNote : t.invoice;
  const seller = view.seller;
  return {
    language: lang,
    title,
    pageLabel: { prefix: cssString(`${title} ${number} · ${t.page}`), of: cssString(t.pageOf) },
    seller: { name: seller.name, addressLines: addressLines(seller), cvr: seller.cvr, email: seller.email },
    logo: view.logo ? { src: logoDataUrl(view.logo) } : null,
    buyer: { name: view.buyer.name, contactPerson: view.buyer.contactPerson, addressLines: addressLines(view.buyer), cvr: view.buyer.cvr },
    details,
    credits: view.credits
      ? { reference: t.creditsInvoice(view.credits.number.toString(), date(view.credits.issueDate)), reason: view.credits.reason }
      : null,
    heading: view.heading,
    message: view.message,
    groups,
    vatRows: [
      ...view.vatSummary.map((r) => ({ label: `${t.vat} ${formatRate(r.vatRateBps, lang)}`, vatNumber: null, base: money(r.netOere), vat: money(r.vatOere) })),
      ...view.exemptSummary.map((r) => ({ label: exemptionWording(r.reason, lang), vatNumber: vatNumberFor(r.reason), base: money(r.netOere), vat: money(0) })),
    ],
    totals: [
      { label: t.subtotal, value: money(view.netOere), grand: false },
      { label: t.vatTotal, value: money(view.vatOere), grand: false },
      { label: isCredit ? t.creditNoteTotal : t.invoiceTotal, value: money(view.grossOere), grand: true },
    ],
    payment,
    paymentUrl,
    paymentQr,
    paymentHint: isCredit ? null : t.paymentReferenceHint,
    footer: [seller.name, addressLines(seller).join(', '), seller.cvr ? `${t.cvr} ${seller.cvr}` : '', seller.email ?? '']
      .filter(Boolean)
      .join(' · '),
    t: {
      customer: t.customer,
      attention: t.attention,
      cvr: t.cvr,
      email: t.email,
      description: t.description,
      quantity: t.quantity,
      unitPrice: t.unitPrice,
      discount: t.discount,
      vatRate: t.vatRate,
      amount: t.amount,
      vatBreakdown: t.vatBreakdown,
      taxableAmount: t.taxableAmount,
      vat: t.vat,
      payment: t.payment,
      reason: t.reason,
    },
  };
}

export const INVOICE_TEMPLATE_URL = new URL('./templates/invoice.hbs', import.meta.url);

// An isolated Handlebars environment: nothing registered globally by other code can change what a document says.
// strict: a field the template names but the model lacks is an error, not an empty string on a legal document.
const template = Handlebars.create().compile<InvoiceTemplateModel>(readFileSync(INVOICE_TEMPLATE_URL, 'utf8'), { strict: true });

export function renderInvoiceHtml(view: InvoiceDocumentView): string {
  return template(invoiceTemplateModel(view));
}
