/**
 * FI-kort type 71 (the Danish giro/indbetalingskort +71): the payment id a debtor types into the bank's "betal
 * indbetalingskort" form, and the line printed on the invoice. The Payments Council's (Betalingsrådet) rules for
 * FI-kort: the payment id of type 71 is 15 digits, the last a modulus-10 check digit over the 14 before it, weights
 * 2, 1, 2, 1, … from the rightmost payload digit, the digits of each product added. Ours: the invoice number
 * left-padded with zeros to 14 digits. Pure, tested from tables (test/unit/fik-payment-id.test.ts).
 */

/** An FI creditor number: 8 digits, the first an 8. */
export const FI_CREDITOR_NUMBER = /^8[0-9]{7}$/;

/** The modulus-10 check digit of a payload of digits. */
export function fikCheckDigit(payload: string): number {
  if (!/^[0-9]+$/.test(payload)) throw new RangeError('a payload is digits only');
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    const digit = payload.charCodeAt(payload.length - 1 - i) - 48;
    const product = digit * (i % 2 === 0 ? 2 : 1);
    sum += product > 9 ? product - 9 : product;
  }
  return (10 - (sum % 10)) % 10;
}

/** The 15-digit payment id of invoice number `number`. */
export function fikPaymentId(number: number): string {
  if (!Number.isSafeInteger(number) || number < 1 || number >= 1e14) throw new RangeError('an invoice number is 1..14 digits');
  const payload = String(number).padStart(14, '0');
  return payload + String(fikCheckDigit(payload));
}

/** True for 15 digits whose last is the check digit of the 14 before it. */
export function isFikPaymentId(value: string): boolean {
  return /^[0-9]{15}$/.test(value) && fikCheckDigit(value.slice(0, 14)) === Number(value[14]);
}

/** The line printed on the invoice: `+71<` payment id `+` creditor number `<`. */
export const fikLine = (paymentId: string, creditorNumber: string): string => `+71<${paymentId}+${creditorNumber}<`;

/** The invoice's `fik` object, or null for an invoice issued without a creditor number. */
export function fikOf(row: { fik_payment_id: string | null; fik_creditor_number: string | null }): Fik | null {
  if (row.fik_payment_id == null || row.fik_creditor_number == null) return null;
  return { type: '71', paymentId: row.fik_payment_id, creditorNumber: row.fik_creditor_number, line: fikLine(row.fik_payment_id, row.fik_creditor_number) };
}

export interface Fik {
  type: '71';
  paymentId: string;
  creditorNumber: string;
  line: string;
}
