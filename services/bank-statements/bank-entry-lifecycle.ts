import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of a bank statement entry (bank_statement_entries.status, 035_bank_statements.sql), decided when its
 * statement is imported (import-bank-statement.ts) and moved on only by a bookkeeper's match:
 *
 *   (import) → matched | unmatched | duplicate | ignored;  unmatched → matched (POST …/match).
 *
 * - `ignored`: not money in for an invoice: a debit, not booked (pending, information), or not in DKK.
 * - `duplicate`: an entry an earlier import (or earlier in the same document) holds already; it books nothing.
 * - `unmatched`: a DKK credit no rule tied to one invoice; it waits for a bookkeeper.
 * - `matched`: its payment is booked on an invoice. Final: a payment is never changed or removed.
 *
 * Every entry is inserted as `ignored`, `duplicate` or `unmatched`; an import that matches one moves it with `match`
 * in the same transaction, exactly as the bookkeeper's match does later.
 */
export const BANK_ENTRY_STATUSES = ['matched', 'unmatched', 'duplicate', 'ignored'] as const;
export type BankEntryStatus = (typeof BANK_ENTRY_STATUSES)[number];

export const BANK_ENTRY_TRANSITIONS = {
  /** Its payment is booked on an invoice (by the import's rules, or by hand). */
  match: { from: ['unmatched'], to: 'matched' },
} as const;

export const BANK_ENTRY_LIFECYCLE = defineLifecycle({
  name: 'bank statement entry',
  table: 'bank_statement_entries',
  column: 'status',
  stateNoun: 'status',
  states: BANK_ENTRY_STATUSES,
  transitions: BANK_ENTRY_TRANSITIONS,
});

/** Each status by name (`BANK_ENTRY_STATUS.unmatched`). */
export const BANK_ENTRY_STATUS = BANK_ENTRY_LIFECYCLE.state;
