/** Money text for people: pages, documents and mails all show øre the same way. */
export type MoneyLanguage = 'da' | 'en';

export const groupThousands = (digits: string, separator: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, separator);

/** Øre as Danish ("1.234,56 kr.") or English ("DKK 1,234.56") money text; exact integer arithmetic, no floats. */
export function formatOere(oere: number, language: MoneyLanguage): string {
  if (!Number.isSafeInteger(oere)) throw new RangeError(`amount ${oere} is not a whole number of øre`);
  const sign = oere < 0 ? '-' : '';
  const abs = Math.abs(oere);
  const kroner = Math.floor(abs / 100).toString();
  const cents = (abs % 100).toString().padStart(2, '0');
  return language === 'da'
    ? `${sign}${groupThousands(kroner, '.')},${cents} kr.`
    : `DKK ${sign}${groupThousands(kroner, ',')}.${cents}`;
}
