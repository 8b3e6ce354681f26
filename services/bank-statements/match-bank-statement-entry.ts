import type { Clock } from '../shared/clock.ts';
import type { Keyring } from '../shared/crypto.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import type { ReceiptDispatch } from '../payments/receipt-dispatch.ts';
import { BANK_ENTRY_LIFECYCLE, BANK_ENTRY_STATUS } from './bank-entry-lifecycle.ts';
import { ENTRY_COLUMNS, toEntry, type EntryRow } from './bank-statement-queries.ts';
import { bookEntry } from './book-entry.ts';

export interface EntryMatchDeps {
  clock: Clock;
  keyring: Keyring;
  receiptDispatch?: ReceiptDispatch | undefined;
}

/**
 * POST /v1/bank-statement-entries/{entryId}/match: a bookkeeper ties an `unmatched` entry to an invoice, and its payment
 * is booked there exactly as the import books a matched one (book-entry.ts). The entry row is locked first, so two
 * matches of one entry book once: the second finds it `matched` (422 entry_not_unmatched). Unknown or another
 * organisation's entry: 404 bank_statement_entry_not_found; the invoice's refusals are the payment route's
 * (404 invoice_not_found, 422 invoice_not_issued, credit_note_not_payable, payment_date_in_future).
 */
export function matchBankStatementEntry(deps: EntryMatchDeps, organizationId: string, entryId: string, invoiceId: string): MutationUseCase {
  return async (tx, request) => {
    if (!isUuid(entryId)) throw notFound('bank_statement_entry_not_found', 'bank statement entry');
    const [row] = await tx<EntryRow[]>`
      SELECT ${tx(ENTRY_COLUMNS)} FROM bank_statement_entries
      WHERE organization_id = ${organizationId} AND id = ${entryId} FOR UPDATE`;
    if (!row) throw notFound('bank_statement_entry_not_found', 'bank statement entry');
    BANK_ENTRY_LIFECYCLE.assert(row.status, 'match', () =>
      new DomainError('entry_not_unmatched', `The entry is ${row.status}: only an unmatched entry can be matched to an invoice.`));
    let done: Awaited<ReturnType<typeof bookEntry>>;
    try {
      done = await bookEntry(
        tx, deps, organizationId,
        { id: row.id, accountId: row.account_id, identity: row.identity, amountOere: row.amount_oere, bookingDate: row.booking_date },
        invoiceId,
        { now: request.now },
      );
    } catch (err) {
      // The payment route's refusal of a date names its body's field, which this request has not: the entry's date is meant.
      if (err instanceof DomainError && err.code === 'payment_date_in_future') throw new DomainError(err.code, `The entry's booking date ${row.booking_date} is after today.`);
      throw err;
    }
    const receipts = deps.receiptDispatch;
    const paymentId = done.paymentId;
    return {
      status: 200,
      data: toEntry(deps.keyring, { ...row, status: BANK_ENTRY_STATUS.matched, invoice_id: done.booked.invoice.id, payment_id: paymentId }),
      meta: {},
      pending: done.written,
      ...(receipts && !done.booked.replayed ? { afterCommit: () => receipts.dispatch(paymentId) } : {}),
    };
  };
}
