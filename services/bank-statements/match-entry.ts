import { isFikPaymentId } from '../payments/fik-payment-id.ts';

/**
 * The matching rules for a bank statement entry (docs/bank-payments.md, "Bank statements (camt.053)"), as pure
 * functions over what the entry says and what the organisation's invoices are; the import asks the database for the
 * candidates these functions name and hands the answers back. Tested from tables (test/unit/match-entry.test.ts).
 *
 * In this order:
 *   1. a payment id: the structured creditor reference, or any remittance text, holding the 15-digit FI-kort payment
 *      id of one of the organisation's invoices (bare, or framed as `+71<…+…<`) → that invoice, whatever its balance;
 *   2. an invoice number: the unstructured remittance holding, as a whole word, the number of exactly one of the
 *      organisation's open invoices, and the entry's amount equal to that invoice's balance → that invoice;
 *   3. otherwise unmatched.
 */

export interface EntryTexts {
  /** RmtInf/Strd/CdtrRefInf/Ref. */
  reference: string | null;
  /** RmtInf/Ustrd. */
  remittance: string | null;
  /** Any other text of the entry (additional remittance and entry information). */
  otherTexts: readonly string[];
}

/** A run of 15 digits standing alone (no digit on either side), with or without the +71 frame around it. */
const FIFTEEN_DIGITS = /(?<![0-9])[0-9]{15}(?![0-9])/g;
/** `71` and a payment id as one run of 17 digits. */
const TYPE_71_PREFIXED = /(?<![0-9])71([0-9]{15})(?![0-9])/g;
/** The FI-kort line `+71<payment id+creditor<`, spaces allowed where people type them. */
const FIK_LINE = /\+\s*71\s*<\s*([0-9]{15})\s*\+/g;

/**
 * The payment ids an entry names, in the order of the rule: the structured reference first, then the other texts;
 * each once. Only 15-digit runs whose check digit holds can be payment ids, so others are never looked up.
 */
export function paymentIdCandidates(entry: EntryTexts): string[] {
  const found: string[] = [];
  const add = (id: string) => {
    if (isFikPaymentId(id) && !found.includes(id)) found.push(id);
  };
  const texts = [entry.reference, entry.remittance, ...entry.otherTexts].filter((t): t is string => t !== null);
  for (const t of texts) {
    for (const m of t.matchAll(FIK_LINE)) add(m[1]!);
    for (const m of t.matchAll(FIFTEEN_DIGITS)) add(m[0]);
    // The card type written before the id without a separator (`71` + 15 digits), as some banks pass the +71 line on.
    for (const m of t.matchAll(TYPE_71_PREFIXED)) add(m[1]!);
    // A structured reference written with spaces (`000 000 067 097 535`) is one reference: its digits count.
    if (t === entry.reference) {
      const digits = t.replace(/[\s.-]/g, '');
      if (/^[0-9]{15}$/.test(digits)) add(digits);
    }
  }
  return found;
}

/** Digits standing as a whole word: no letter, digit or underscore on either side. */
const WHOLE_NUMBER = /(?<![\p{L}\p{N}_])[0-9]{1,15}(?![\p{L}\p{N}_])/gu;

/** The invoice numbers the unstructured remittance names as whole words (leading zeros ignored), each once. */
export function invoiceNumberCandidates(entry: Pick<EntryTexts, 'remittance'>): number[] {
  if (entry.remittance === null) return [];
  const found = new Set<number>();
  for (const m of entry.remittance.matchAll(WHOLE_NUMBER)) {
    const n = Number(m[0]);
    if (n >= 1 && Number.isSafeInteger(n)) found.add(n);
  }
  return [...found];
}

export interface OpenInvoice {
  id: string;
  number: number;
  balanceOere: number;
}

/** What the organisation's invoices say to the rules: looked up by the import once for all its entries. */
export interface InvoiceLookup {
  /** The payable invoice carrying a payment id, by the id. */
  byPaymentId: ReadonlyMap<string, string>;
  /** The open invoices bearing a number, by the number (a gap-free series gives one at most). */
  openByNumber: ReadonlyMap<number, readonly OpenInvoice[]>;
}

export type MatchDecision =
  | { invoiceId: string; rule: 'payment_id' | 'invoice_number' }
  | { invoiceId: null; rule: null; reason: 'no_reference' | 'ambiguous_number' | 'amount_differs' };

/**
 * The decision for a DKK credit of `amountOere`, given the organisation's invoices carrying one of the entry's
 * payment ids (`paymentIdCandidates`) and its open invoices bearing one of its numbers (`invoiceNumberCandidates`).
 */
export function decideMatch(entry: EntryTexts & { amountOere: number }, invoices: InvoiceLookup): MatchDecision {
  for (const id of paymentIdCandidates(entry)) {
    const invoiceId = invoices.byPaymentId.get(id);
    if (invoiceId !== undefined) return { invoiceId, rule: 'payment_id' };
  }
  const named = invoiceNumberCandidates(entry).flatMap((n) => invoices.openByNumber.get(n) ?? []);
  if (named.length === 0) return { invoiceId: null, rule: null, reason: 'no_reference' };
  // Two open invoices named (or one number twice in the series, which a gap-free series never has) is no answer.
  if (named.length > 1) return { invoiceId: null, rule: null, reason: 'ambiguous_number' };
  const only = named[0]!;
  if (only.balanceOere !== entry.amountOere) return { invoiceId: null, rule: null, reason: 'amount_differs' };
  return { invoiceId: only.id, rule: 'invoice_number' };
}
