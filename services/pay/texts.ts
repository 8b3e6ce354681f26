/** The pay page's words, in Danish and English. Every page reads its strings from here; templates place them. */

export type Language = 'da' | 'en';

export const TEXTS = {
  da: {
    otherLanguage: { code: 'en', label: 'English' },
    languageNav: 'Sprog',
    serviceName: 'Betaling af faktura',
    codeTitle: 'Betal en faktura',
    codeIntro: 'Skriv betalingskoden fra din faktura for at se beløbet og betale.',
    codeLabel: 'Betalingskode',
    codeHint: '8 tegn, fx ABCD-1234. Store eller små bogstaver, med eller uden bindestreg.',
    codeSubmit: 'Find faktura',
    codeInvalid: 'Det er ikke en gyldig betalingskode. Den har 8 tegn, fx ABCD-1234.',
    codeUnknown: 'Vi kan ikke finde en faktura med den kode. Tjek koden og prøv igen.',
    codeLimited: (s: number) => `For mange forsøg. Vent ${s} sekunder, og prøv igen.`,
    invoiceTitle: (n: number) => `Faktura nr. ${n}`,
    creditor: 'Betales til',
    invoiceNumber: 'Fakturanummer',
    dueDate: 'Forfaldsdato',
    noDueDate: 'Ingen',
    invoiceTotal: 'Fakturabeløb',
    balance: 'At betale nu',
    payCard: 'Betal med kort',
    payMobilePay: 'Betal med MobilePay',
    payHint: 'Du betaler hos vores betalingsudbyder. Dine kortoplysninger sendes aldrig til denne side eller til kreditor.',
    nothingToPay: 'Der er intet at betale på denne faktura. Tak.',
    creditBalance: (amount: string) => `Du har ${amount} til gode på denne faktura.`,
    returnProcessing: 'Betalingen behandles',
    returnProcessingText: 'Vi venter på bekræftelse fra betalingsudbyderen. Siden opdaterer sig selv om et øjeblik.',
    returnSucceeded: 'Tak for din betaling',
    returnSucceededText: (amount: string, n: number) => `Vi har modtaget ${amount} for faktura nr. ${n}.`,
    returnPaidInFull: 'Fakturaen er nu betalt.',
    returnRemaining: (amount: string) => `Der mangler stadig ${amount}.`,
    returnFailed: 'Betalingen gik ikke igennem',
    returnFailedText: 'Der er ikke trukket penge. Du kan prøve igen.',
    tryAgain: 'Prøv igen',
    backToInvoice: 'Tilbage til fakturaen',
    notFoundTitle: 'Siden findes ikke',
    notFoundText: 'Linket er forkert eller ikke længere gyldigt. Brug betalingskoden fra fakturaen.',
    goToCode: 'Indtast betalingskode',
    errorTitle: 'Noget gik galt',
    errorText: 'Prøv igen om lidt. Der er ikke trukket penge.',
    providerUnavailable: 'Betalingsudbyderen svarer ikke lige nu. Der er ikke trukket penge. Prøv igen om lidt.',
  },
  en: {
    otherLanguage: { code: 'da', label: 'Dansk' },
    languageNav: 'Language',
    serviceName: 'Invoice payment',
    codeTitle: 'Pay an invoice',
    codeIntro: 'Enter the payment code from your invoice to see the amount and pay.',
    codeLabel: 'Payment code',
    codeHint: '8 characters, e.g. ABCD-1234. Upper or lower case, with or without the hyphen.',
    codeSubmit: 'Find invoice',
    codeInvalid: 'That is not a valid payment code. It has 8 characters, e.g. ABCD-1234.',
    codeUnknown: 'We cannot find an invoice with that code. Check the code and try again.',
    codeLimited: (s: number) => `Too many attempts. Wait ${s} seconds and try again.`,
    invoiceTitle: (n: number) => `Invoice no. ${n}`,
    creditor: 'Pay to',
    invoiceNumber: 'Invoice number',
    dueDate: 'Due date',
    noDueDate: 'None',
    invoiceTotal: 'Invoice total',
    balance: 'Amount due now',
    payCard: 'Pay by card',
    payMobilePay: 'Pay with MobilePay',
    payHint: 'You pay with our payment provider. Your card details never reach this page or the creditor.',
    nothingToPay: 'There is nothing to pay on this invoice. Thank you.',
    creditBalance: (amount: string) => `You have a credit of ${amount} on this invoice.`,
    returnProcessing: 'Your payment is being processed',
    returnProcessingText: 'We are waiting for the payment provider to confirm. This page refreshes itself in a moment.',
    returnSucceeded: 'Thank you for your payment',
    returnSucceededText: (amount: string, n: number) => `We have received ${amount} for invoice no. ${n}.`,
    returnPaidInFull: 'The invoice is now paid.',
    returnRemaining: (amount: string) => `${amount} is still outstanding.`,
    returnFailed: 'The payment did not go through',
    returnFailedText: 'No money has been taken. You can try again.',
    tryAgain: 'Try again',
    backToInvoice: 'Back to the invoice',
    notFoundTitle: 'Page not found',
    notFoundText: 'The link is wrong or no longer valid. Use the payment code from the invoice.',
    goToCode: 'Enter a payment code',
    errorTitle: 'Something went wrong',
    errorText: 'Please try again shortly. No money has been taken.',
    providerUnavailable: 'The payment provider is not answering right now. No money has been taken. Please try again shortly.',
  },
} as const;

export type Texts = (typeof TEXTS)[Language];


const DATE_FORMATS = {
  da: new Intl.DateTimeFormat('da-DK', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }),
  en: new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }),
};

/** 'YYYY-MM-DD' as "14. marts 2026" / "14 March 2026" (the date itself, never shifted by a time zone). */
export const formatDate = (date: string, lang: Language): string => DATE_FORMATS[lang].format(new Date(`${date}T00:00:00Z`));

/**
 * The page's language: an explicit choice (`lang` in the query or form) first, then the browser's stated
 * preference for Danish or English, then the fallback (the customer's language on invoice pages), then Danish.
 */
export function pickLanguage(explicit: unknown, acceptLanguage: string | undefined, fallback?: Language): Language {
  if (explicit === 'da' || explicit === 'en') return explicit;
  if (acceptLanguage) {
    const ranked = acceptLanguage
      .split(',')
      .map((part) => {
        const [tag, ...params] = part.trim().toLowerCase().split(';');
        const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
        return { lang: tag!.split('-')[0], q: q === undefined ? 1 : Number(q) };
      })
      .filter((x) => (x.lang === 'da' || x.lang === 'en') && x.q > 0)
      .sort((a, b) => b.q - a.q);
    if (ranked[0]) return ranked[0].lang as Language;
  }
  return fallback ?? 'da';
}
