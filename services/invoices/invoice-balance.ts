/**
 * An invoice's balance, defined once: gross + fees − paid − credited, the fees being every claim item charged on it
 * (reminder fees, posted late-payment interest and the 310 kr compensation) (docs/api-conventions.md, "Payments and
 * balances"). A payment beyond the balance takes it below 0 (the customer's credit); a credit note's own balance is 0,
 * since it credits its whole gross. Two twins: the SQL function `invoice_balance_oere` (028_invoice_balance.sql), for
 * the statements that sum balances, and `invoiceBalanceOere`, for a row already read. test/db/invoice-balance.test.ts
 * checks that they agree.
 */
export interface BalanceTerms {
  grossOere: number;
  /** The claim items charged on the invoice: reminder fees, posted interest, the compensation. */
  feesOere: number;
  /** Every payment's whole amount (an overpayment included). */
  paidOere: number;
  /** The gross of the credit note that credits the invoice. */
  creditedOere: number;
}

/** The balance in øre (the TypeScript twin of `invoice_balance_oere`). */
export const invoiceBalanceOere = (t: BalanceTerms): number => t.grossOere + t.feesOere - t.paidOere - t.creditedOere;

/** The columns an invoice read carries its terms in (invoice-queries.ts, `invoiceSelect`). */
export interface BalanceColumns {
  gross_oere: number;
  /** Every claim item (invoice_fees of any kind). */
  fees_oere: number;
  paid_oere: number;
  credited_oere: number;
}

/** The balance of an invoice row as read (an invoice's; a credit note's is 0, see `toInvoice`). */
export const rowBalanceOere = (r: BalanceColumns): number =>
  invoiceBalanceOere({ grossOere: r.gross_oere, feesOere: r.fees_oere, paidOere: r.paid_oere, creditedOere: r.credited_oere });

/**
 * What is left of the principal: gross − paid − credited, never below 0. Payments cover the principal first, so
 * what remains of the balance beyond it is fees alone (which are never reminded or collected).
 */
export const principalOutstandingOere = (t: Omit<BalanceTerms, 'feesOere'>): number => Math.max(0, t.grossOere - t.paidOere - t.creditedOere);

