import type { ExemptionReason } from '../invoices/invoice-document.ts';

/**
 * Every mapping from the service's own vocabulary to the codes of the e-invoice profiles, written once
 * (docs/einvoicing.md, "What the e-invoice says"): VAT categories and exemption reasons, units, payment means, and
 * the identifier schemes of parties. The builder (build-ubl.ts) looks everything up here and decides nothing.
 */
export type EInvoiceProfile = 'peppol-bis-3' | 'oioubl';
export const EINVOICE_PROFILES = ['peppol-bis-3', 'oioubl'] as const satisfies readonly EInvoiceProfile[];

// ---------------------------------------------------------------- VAT

/**
 * The VAT category of a line: a rate above 0 is standard-rated (Peppol `S`, OIOUBL `StandardRated`); 0 % carries
 * one of the exemption reasons the API takes (contracts/common.ts VatExemptionReason), each mapped to the category
 * that says the same: momslovens § 13 exempt (`E`), reverse charge (`AE`, OIOUBL `ReverseCharge`), intra-EU supply
 * of goods (`K`) and export outside the EU (`G`), with the EN 16931 exemption reason code (VATEX) and text.
 */
export interface VatCategory {
  peppol: 'S' | 'E' | 'AE' | 'K' | 'G';
  oioubl: 'StandardRated' | 'ZeroRated' | 'ReverseCharge';
  /** VATEX code and reason text of a 0 % category; null for standard-rated lines. */
  exemption: { code: string; text: string } | null;
  /** Whether the category needs the buyer's VAT number (reverse charge, intra-EU supply). */
  needsBuyerVatNumber: boolean;
}

const STANDARD: VatCategory = { peppol: 'S', oioubl: 'StandardRated', exemption: null, needsBuyerVatNumber: false };

export const EXEMPTION_CATEGORIES: Record<ExemptionReason, VatCategory> = {
  ML13: {
    peppol: 'E',
    oioubl: 'ZeroRated',
    exemption: { code: 'VATEX-EU-132', text: 'Momsfritaget, jf. momslovens § 13' },
    needsBuyerVatNumber: false,
  },
  OMVENDT: {
    peppol: 'AE',
    oioubl: 'ReverseCharge',
    exemption: { code: 'VATEX-EU-AE', text: 'Omvendt betalingspligt' },
    needsBuyerVatNumber: true,
  },
  EU_VARE: {
    peppol: 'K',
    oioubl: 'ZeroRated',
    exemption: { code: 'VATEX-EU-IC', text: 'Momsfri levering af varer til andet EU-land' },
    needsBuyerVatNumber: true,
  },
  EKSPORT: {
    peppol: 'G',
    oioubl: 'ZeroRated',
    exemption: { code: 'VATEX-EU-G', text: 'Eksport uden for EU, momsfritaget' },
    needsBuyerVatNumber: false,
  },
};

export const vatCategory = (reason: ExemptionReason | null): VatCategory => (reason === null ? STANDARD : EXEMPTION_CATEGORIES[reason]);

/** The VAT scheme as each profile names it. */
export const TAX_SCHEME = {
  peppol: { 'cbc:ID': 'VAT' },
  oioubl: { 'cbc:ID': { '@schemeAgencyID': '320', '@schemeID': 'urn:oioubl:id:taxschemeid-1.1', '#': '63' }, 'cbc:Name': 'Moms' },
} as const;

/** A rate in basis points as the profiles write a percentage: 2500 → "25", 1250 → "12.5". */
export const percent = (bps: number): string => String(bps / 100);

// ---------------------------------------------------------------- units

/**
 * The UN/ECE Recommendation 20 unit code of a line's free-text unit. A line without a unit, or with one not listed,
 * is counted in pieces: `C62` ("one"), as both profiles accept.
 */
const UNIT_CODES: Record<string, string> = {
  stk: 'C62', 'stk.': 'C62', styk: 'C62', stykker: 'C62', pcs: 'C62', piece: 'C62', pieces: 'C62', ea: 'C62',
  time: 'HUR', timer: 'HUR', t: 'HUR', 'hour': 'HUR', hours: 'HUR', hr: 'HUR', h: 'HUR',
  min: 'MIN', minut: 'MIN', minutter: 'MIN', minute: 'MIN', minutes: 'MIN',
  dag: 'DAY', dage: 'DAY', day: 'DAY', days: 'DAY',
  uge: 'WEE', uger: 'WEE', week: 'WEE', weeks: 'WEE',
  md: 'MON', 'md.': 'MON', mdr: 'MON', 'mdr.': 'MON', måned: 'MON', måneder: 'MON', month: 'MON', months: 'MON',
  år: 'ANN', year: 'ANN', years: 'ANN',
  kg: 'KGM', g: 'GRM', ton: 'TNE',
  m: 'MTR', meter: 'MTR', km: 'KMT', cm: 'CMT', mm: 'MMT',
  m2: 'MTK', 'm²': 'MTK', kvm: 'MTK', m3: 'MTQ', 'm³': 'MTQ',
  l: 'LTR', liter: 'LTR', litre: 'LTR', ml: 'MLT',
  kwh: 'KWH', pk: 'PA', pakke: 'PA', pakker: 'PA', sæt: 'SET', set: 'SET',
};

export const unitCode = (unit: string | null): string => (unit === null ? 'C62' : (UNIT_CODES[unit.trim().toLowerCase()] ?? 'C62'));

// ---------------------------------------------------------------- payment means

/**
 * How an invoice is paid, in each profile's code: a transfer to the seller's Danish bank account (reg.nr and account
 * number: UNCL4461 `42`, OIOUBL channel `DK:BANK`), and, when the invoice has one, the FI-kort +71 payment id
 * (`93`, `DK:FIK`; Peppol's PaymentID `71#<id>` with the creditor number as the account, DK-R-010/011). OIOUBL lists
 * both; Peppol allows one payment means code per invoice (UBL-SR-47), so there the FI-kort payment is the means and
 * the bank account is stated in the payment terms.
 */
export const PAYMENT_MEANS = {
  bankAccount: { code: '42', oioublChannel: 'DK:BANK' },
  fik: { code: '93', oioublChannel: 'DK:FIK' },
} as const;

// ---------------------------------------------------------------- parties

/**
 * The identifier schemes of parties. Peppol writes ISO 6523 ICDs (0184 CVR, 0088 GLN, 0198 Danish VAT number);
 * OIOUBL has its own names for the Danish ones and knows no other. A Peppol participant of another scheme has no
 * OIOUBL address: null.
 */
export function oioublScheme(icd: string): { schemeID: string; schemeAgencyID?: string; prefix: string } | null {
  switch (icd) {
    case '0088':
      return { schemeID: 'GLN', schemeAgencyID: '9', prefix: '' };
    case '0184':
      return { schemeID: 'DK:CVR', prefix: 'DK' };
    case '0198':
      return { schemeID: 'DK:SE', prefix: 'DK' };
    default:
      return null;
  }
}

/** A Danish CVR as each profile writes it: bare 8 digits for Peppol 0184, `DK` + 8 digits for OIOUBL DK:CVR. */
export const cvrOf = (value: string): string => value.replace(/^DK/, '');

/**
 * The ISO 3166-1 alpha-2 code of an address's free-text country: none means Denmark; a two-letter code is taken as
 * it is; a few names are known. Anything else: null (the e-invoice cannot say where the party is).
 */
const COUNTRY_NAMES: Record<string, string> = {
  danmark: 'DK', denmark: 'DK', sverige: 'SE', sweden: 'SE', norge: 'NO', norway: 'NO', tyskland: 'DE', germany: 'DE',
  deutschland: 'DE', finland: 'FI', holland: 'NL', nederland: 'NL', netherlands: 'NL', frankrig: 'FR', france: 'FR',
  storbritannien: 'GB', 'united kingdom': 'GB', england: 'GB', polen: 'PL', poland: 'PL', island: 'IS', iceland: 'IS',
  færøerne: 'FO', grønland: 'GL', greenland: 'GL',
};

export function countryCode(country: string | null): string | null {
  const value = (country ?? '').trim();
  if (value === '') return 'DK';
  if (/^[A-Za-z]{2}$/.test(value)) return value.toUpperCase();
  return COUNTRY_NAMES[value.toLowerCase()] ?? null;
}

// ---------------------------------------------------------------- amounts

/** Øre as a decimal amount with two places ("1234.50"), exactly, for any safe integer. */
export function amount(oere: number): string {
  const sign = oere < 0 ? '-' : '';
  const abs = Math.abs(oere);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
