import type { CasePaakravView } from '../../services/cases/case-paakrav-document.ts';
import { formatOere } from '../../services/shared/money.ts';
import { addressLines, formatDate } from './invoice-template.ts';
import { paymentRows, renderDemandLetterHtml, type ReminderTemplateModel } from './reminder-template.ts';
import { COLLECTION_FEE_OERE, DEMAND_WORDS, keep, pieces } from './text-pieces.ts';

/**
 * A collection case's own demand letter (påkrav, Inkassoloven § 10; docs/collections.md, "The case's påkrav") as
 * self-contained HTML, Danish or English: the creditor with address, CVR and bank details, the debtors' names and
 * addresses, each claim (what it is, invoice date, due date, principal), fees and payments, the total, the deadline and
 * the warning that the claim goes to debt collection with added costs (inkassogebyr, Renteloven § 9 b stk. 3) unless
 * paid by then. Formatted here from the view and printed by the reminders' template (reminder.hbs), the dunning plan's
 * demand letter, so the two påkrav look and read alike; the template only places strings, each HTML-escaped.
 */

const TEXTS = {
  da: {
    ...DEMAND_WORDS.da,
    title: 'Påkrav',
    subtitle: `Påkrav efter inkassolovens ${keep('§ 10')}`,
    creditor: 'Kreditor',
    debtor: 'Skyldner',
    debtors: 'Skyldnere',
    caseNumber: 'Sagsnr.',
    reference: 'Jeres reference',
    invoiceNumber: 'Fakturanr.',
    deadline: 'Betalingsfrist',
    intro: `Vi har ikke modtaget betaling af nedenstående forfaldne krav. Dette brev er et påkrav, jf. inkassolovens ${keep('§ 10')}.`,
    claims: 'Kravet',
    description: 'Beskrivelse',
    invoiceDate: 'Fakturadato',
    dueDate: 'Forfaldsdato',
    principal: 'Hovedstol',
    claimFallback: (n: number) => `Krav ${n}`,
    principalTotal: 'Hovedstol i alt',
    fees: 'Rykkergebyrer',
    paid: 'Betalt og krediteret',
    warningTitle: 'Varsel om inkasso',
    paymentHint: 'Angiv betalingsreferencen ved betaling.',
  },
  en: {
    ...DEMAND_WORDS.en,
    title: 'Demand for payment',
    subtitle: `Demand under ${keep('section 10')} of the Danish Debt Collection Act`,
    creditor: 'Creditor',
    debtor: 'Debtor',
    debtors: 'Debtors',
    caseNumber: 'Case no.',
    reference: 'Your reference',
    invoiceNumber: 'Invoice no.',
    deadline: 'Payment deadline',
    intro: `We have not received payment of the overdue claim below. This letter is a demand for payment under ${keep('section 10')} of the Danish Debt Collection Act (inkassoloven).`,
    claims: 'The claim',
    description: 'Description',
    invoiceDate: 'Invoice date',
    dueDate: 'Due date',
    principal: 'Principal',
    claimFallback: (n: number) => `Claim ${n}`,
    principalTotal: 'Principal in total',
    fees: 'Reminder fees',
    paid: 'Paid and credited',
    warningTitle: 'Notice of debt collection',
    paymentHint: 'Please state the payment reference when paying.',
  },
} as const;

export function casePaakravTemplateModel(view: CasePaakravView): ReminderTemplateModel {
  if (view.kind !== 'casePaakrav') throw new TypeError(`a view of kind ${String(view.kind)} rendered as casePaakrav`);
  if (view.claims.length === 0) throw new Error('a påkrav needs at least one claim');
  if (view.debtors.length === 0) throw new Error('a påkrav needs at least one debtor');
  const lang = view.language;
  const t = TEXTS[lang];
  const money = (oere: number): string => formatOere(oere, lang);
  const date = (d: string): string => formatDate(d, lang);
  const { creditor } = view;
  const principalTotal = view.claims.reduce((sum, c) => sum + c.principalOere, 0);

  const details: ReminderTemplateModel['details'] = [
    { label: t.date, value: date(view.sentOn) },
    { label: t.caseNumber, value: String(view.caseNumber) },
  ];
  if (view.invoiceNumber !== null) details.push({ label: t.invoiceNumber, value: String(view.invoiceNumber) });
  else if (view.externalReference) details.push({ label: t.reference, value: view.externalReference });
  details.push({ label: t.deadline, value: date(view.deadline) });

  const amounts: ReminderTemplateModel['amounts'] = [{ label: t.principalTotal, value: money(principalTotal), grand: false }];
  if (view.feesOere > 0) amounts.push({ label: t.fees, value: money(view.feesOere), grand: false });
  if (view.paidOere > 0) amounts.push({ label: t.paid, value: money(-view.paidOere), grand: false });
  amounts.push({ label: t.total, value: money(view.totalOere), grand: true });

  const payment = paymentRows(lang, { deadline: view.deadline, totalOere: view.totalOere, payee: creditor, reference: view.paymentReference });

  const creditorLines = addressLines(creditor);
  return {
    language: lang,
    title: t.title,
    subtitle: pieces(t.subtitle),
    sellerLabel: t.creditor,
    seller: { name: creditor.name, addressLines: creditorLines, cvr: creditor.cvr, email: creditor.email },
    logo: null,
    buyer: null,
    debtors: { label: view.debtors.length === 1 ? t.debtor : t.debtors, list: view.debtors.map((d) => ({ name: d.name, addressLines: addressLines(d), cvr: d.cvr })) },
    details,
    intro: pieces(t.intro),
    claims: {
      title: t.claims,
      description: t.description,
      invoiceDate: t.invoiceDate,
      dueDate: t.dueDate,
      principal: t.principal,
      list: view.claims.map((c, i) => ({
        description: c.description ?? t.claimFallback(i + 1),
        invoiceDate: c.invoiceDate ? date(c.invoiceDate) : '—',
        dueDate: date(c.dueDate),
        principal: money(c.principalOere),
      })),
    },
    amounts,
    request: pieces(t.request(keep(date(view.deadline)))),
    warning: { title: t.warningTitle, text: pieces(t.warning(keep(date(view.deadline)), keep(money(COLLECTION_FEE_OERE)))) },
    payment,
    paymentHint: t.paymentHint,
    contact: creditor.email ? t.contact(creditor.email) : null,
    footer: [creditor.name, creditorLines.join(', '), creditor.cvr ? `${t.cvr} ${creditor.cvr}` : '', creditor.email ?? ''].filter(Boolean).join(' · '),
    t: { cvr: t.cvr, email: t.email, payment: t.payment },
    feeBasis: null,
  };
}

export function renderCasePaakravHtml(view: CasePaakravView): string {
  return renderDemandLetterHtml(casePaakravTemplateModel(view));
}
