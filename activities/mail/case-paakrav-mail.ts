/**
 * The e-mail that carries a collection case's own påkrav (services/cases/case-paakrav-document.ts): subject and
 * bodies in the document's language, the stored PDF attached, the organisation as the sender's name and as
 * Reply-To, laid out by the one document-mail composer (compose-mail.ts). Its Message-ID is derived from the case
 * alone (`case-paakrav-<caseId>@<sending domain>`), so a retried send is the same mail. The body does not repeat the deadline: the letter (the PDF) carries it, and the mail stays
 * the same on every retry whatever day the step runs.
 */
import type { CasePaakravView } from '../../services/cases/case-paakrav-document.ts';
import { mailMessageId, type OutgoingMail } from '../../services/mail/mail-port.ts';
import { formatOere } from '../../services/shared/money.ts';
import { COLLECTION_FEE_OERE } from '../pdf/text-pieces.ts';
import { composeDocumentMail, oneLine, type DocumentMailParts, type DocumentMailInput } from './compose-mail.ts';

const WORDS = {
  da: {
    subject: (creditor: string, ref: string) => `Påkrav fra ${creditor} (${ref})`,
    fileName: (caseNumber: number) => `paakrav-sag-${caseNumber}.pdf`,
    greeting: (name: string) => `Kære ${name},`,
    intro: (creditor: string) =>
      `Vi har ikke modtaget betaling af et forfaldent krav fra ${creditor}. Vedhæftet er et påkrav efter inkassolovens § 10 med kravet, betalingsfristen og betalingsoplysningerne.`,
    total: 'I alt at betale',
    warning: (fee: string) =>
      `Er beløbet ikke betalt inden fristen i påkravet, overdrages kravet til inkasso. Det medfører yderligere omkostninger for dig, herunder et inkassogebyr på ${fee} efter rentelovens § 9 b, stk. 3.`,
    alreadyPaid: 'Har du allerede betalt, kan du se bort fra denne mail.',
    closing: 'Med venlig hilsen',
  },
  en: {
    subject: (creditor: string, ref: string) => `Demand for payment from ${creditor} (${ref})`,
    fileName: (caseNumber: number) => `demand-for-payment-case-${caseNumber}.pdf`,
    greeting: (name: string) => `Dear ${name},`,
    intro: (creditor: string) =>
      `We have not received payment of an overdue claim from ${creditor}. Attached is a demand for payment under section 10 of the Danish Debt Collection Act, with the claim, the payment deadline and how to pay.`,
    total: 'Total to pay',
    warning: (fee: string) =>
      `If the amount is not paid by the deadline in the demand, the claim will be handed over to debt collection. This will add further costs for you, including a collection fee of ${fee} under section 9 b(3) of the Danish Interest Act.`,
    alreadyPaid: 'If you have already paid, please disregard this mail.',
    closing: 'Kind regards',
  },
} as const;

/** `case-paakrav-<caseId>@<the sending domain>`: one Message-ID per case's påkrav, the same on every retried send. */
export const casePaakravMessageId = (caseId: string, fromAddress: string): string => mailMessageId(`case-paakrav-${caseId}`, fromAddress);

export interface CasePaakravMailInput extends DocumentMailInput<CasePaakravView> {
  /** Whom the greeting names. */
  recipientName: string;
}

export function composeCasePaakravMail(input: CasePaakravMailInput): OutgoingMail {
  const { view } = input;
  const lang = view.language;
  const w = WORDS[lang];
  const sellerName = oneLine(view.creditor.name);
  const ref = view.invoiceNumber !== null ? (lang === 'da' ? `faktura nr. ${view.invoiceNumber}` : `invoice no. ${view.invoiceNumber}`) : (lang === 'da' ? `sag nr. ${view.caseNumber}` : `case no. ${view.caseNumber}`);
  const subject = oneLine(w.subject(sellerName, ref));
  const data: DocumentMailParts['data'] = {
    lang,
    subject,
    greeting: w.greeting(oneLine(input.recipientName)),
    intro: w.intro(sellerName),
    facts: [{ label: w.total, value: formatOere(view.totalOere, lang) }],
    warning: w.warning(formatOere(COLLECTION_FEE_OERE, lang)),
    alreadyPaid: w.alreadyPaid,
    closing: w.closing,
    sellerName,
  };
  const messageId = casePaakravMessageId(view.caseId, input.fromAddress);
  return composeDocumentMail(input, { data, replyTo: view.creditor.email, filename: w.fileName(view.caseNumber), messageId });
}
