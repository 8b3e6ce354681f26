/**
 * Running text for the letters' templates (reminders, demand letters, a case's påkrav): sentences are built with their
 * unbreakable parts marked (dates, amounts, section references), then cut into pieces the template wraps in a span
 * that never breaks across lines.
 */

/** A piece of running text; `keep` pieces never break across lines. */
export type TextPiece = { text: string; keep: boolean };

const KEEP_OPEN = '\u0001';
const KEEP_CLOSE = '\u0002';

/** Marks a part of a sentence as unbreakable. */
export const keep = (s: string): string => `${KEEP_OPEN}${s}${KEEP_CLOSE}`;

/** A sentence built with `keep`, as the template's pieces. */
export function pieces(sentence: string): TextPiece[] {
  const out: TextPiece[] = [];
  for (const part of sentence.split(KEEP_OPEN)) {
    const [kept, rest] = part.includes(KEEP_CLOSE) ? part.split(KEEP_CLOSE) : [undefined, part];
    if (kept) out.push({ text: kept, keep: true });
    if (rest) out.push({ text: rest, keep: false });
  }
  return out;
}

/** The collection fee a hand-over adds (inkassogebyr, Renteloven § 9 b stk. 3), named in every collection warning. */
export { COLLECTION_FEE_OERE } from '../../services/law/danish-law.ts';

/**
 * The words every letter that demands payment shares (the reminders, the dunning plan's demand letter and a case's
 * påkrav): the request, the collection warning (Inkassoloven § 10, Renteloven § 9 b stk. 3), the payment box and the
 * contact line, so that a påkrav says the same whichever way it is sent.
 */
export const DEMAND_WORDS = {
  da: {
    cvr: 'CVR-nr.',
    email: 'E-mail',
    date: 'Dato',
    request: (deadline: string) => `Vi beder dig betale det samlede beløb senest ${deadline}.`,
    total: 'I alt at betale',
    warning: (deadline: string, fee: string) =>
      `Er det samlede beløb ikke betalt senest ${deadline}, overdrager vi kravet til inkasso uden yderligere varsel. ` +
      `Det medfører yderligere omkostninger for dig, herunder et inkassogebyr på ${fee} efter rentelovens ${keep('§ 9 b, stk. 3')}, og øvrige inkassoomkostninger.`,
    payment: 'Betaling',
    payBy: 'Betales senest',
    amount: 'Beløb',
    bankReg: 'Reg.nr.',
    bankAccount: 'Kontonr.',
    paymentReference: 'Betalingsreference',
    contact: (email: string) => `Har du spørgsmål til kravet, eller har du allerede betalt, så kontakt os på ${email}.`,
  },
  en: {
    cvr: 'CVR no.',
    email: 'Email',
    date: 'Date',
    request: (deadline: string) => `Please pay the total amount no later than ${deadline}.`,
    total: 'Total to pay',
    warning: (deadline: string, fee: string) =>
      `If the total amount is not paid by ${deadline}, the claim will be handed over to debt collection without further notice. ` +
      `This will add further costs for you, including a collection fee of ${fee} under ${keep('section 9 b(3)')} of the Danish Interest Act (renteloven) and other collection costs.`,
    payment: 'Payment',
    payBy: 'Pay by',
    amount: 'Amount',
    bankReg: 'Reg. no.',
    bankAccount: 'Account no.',
    paymentReference: 'Payment reference',
    contact: (email: string) => `If you have questions about the claim, or if you have already paid, please contact us at ${email}.`,
  },
} as const;
