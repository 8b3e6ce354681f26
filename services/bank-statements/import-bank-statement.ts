import type { Clock } from '../shared/clock.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { INVOICE_LIFECYCLE, OPEN_STATUSES, isIssued, isOpen } from '../invoices/invoice-lifecycle.ts';
import { balanceTerms } from '../invoices/invoice-queries.ts';
import type { ReceiptDispatch } from '../payments/receipt-dispatch.ts';
import { BANK_ENTRY_LIFECYCLE, BANK_ENTRY_STATUS, type BankEntryStatus } from './bank-entry-lifecycle.ts';
import { findBankStatement } from './bank-statement-queries.ts';
import { bookEntry, type BookableEntry } from './book-entry.ts';
import { decideMatch, invoiceNumberCandidates, paymentIdCandidates, type OpenInvoice } from './match-entry.ts';
import type { CamtStatements, StatementItem } from './read-camt053.ts';

export interface BankStatementImportDeps {
  clock: Clock;
  keyring: Keyring;
  receiptDispatch?: ReceiptDispatch | undefined;
}

/** Receipts handed to the workflow right after the import; the housekeeping loop renders the others (receipt-dispatch.ts). */
const RECEIPTS_DISPATCHED_AT_ONCE = 100;
/** Rows per INSERT: 13 parameters each, well below PostgreSQL's 65 535 per statement. */
const INSERT_CHUNK = 2000;

/** A DKK credit the bank has booked: money in that may pay an invoice. Everything else (and a credit of 0) is ignored. */
export const isCandidate = (item: StatementItem): boolean =>
  item.booked && item.direction === 'CRDT' && item.currency === 'DKK' && item.amountMinor > 0;

interface Planned {
  item: StatementItem;
  id: string;
  status: BankEntryStatus;
}

/**
 * POST /v1/bank-statements: imports the document's statements (read before, `readCamt053`) as one import, books a
 * payment for every entry the rules tie to an invoice (match-entry.ts), and answers with the import's counts.
 *
 * Exactly once, in one transaction with the stored response:
 * - Every entry is inserted first, in the order of its identity, with ON CONFLICT DO NOTHING on the unique index of
 *   first sightings (035_bank_statements.sql). One seen before (by an earlier import, or earlier in this document) is
 *   not inserted there and becomes a `duplicate` row that books nothing. Two imports racing over the same entries
 *   wait for each other on that index, in the same order, so one of them holds each entry and the other sees it
 *   as a duplicate once the first commits (or takes it over if the first rolls back).
 * - The invoices the entries name are then locked at once, in id order (imports over different entries never wait for
 *   each other in a cycle), and their balances read under the lock, so the rule "amount equals balance" is decided on
 *   the balance the payment is booked against. Entries are decided in document order, each booked payment lowering
 *   the balance the next decision sees.
 * - Each match books through `bookPayment` (source `bank`, booking key = account + identity), exactly as the payment
 *   route does, dated the entry's booking date; an entry booked after the organisation's today stays unmatched.
 */
export function importBankStatement(deps: BankStatementImportDeps, organizationId: string, doc: CamtStatements): MutationUseCase {
  return async (tx, request) => {
    const statementId = uuidv7();
    await tx`
      INSERT INTO bank_statements (id, organization_id, account_id, statement_ids, from_date, to_date, entry_count)
      VALUES (${statementId}, ${organizationId}, ${doc.accountId}, ${doc.statementIds}, ${doc.from}, ${doc.to}, ${doc.items.length})`;

    // Ids in document order: the entry list reads in the order of the document.
    const planned: Planned[] = doc.items.map((item) => ({
      item,
      id: uuidv7(),
      status: isCandidate(item) ? BANK_ENTRY_STATUS.unmatched : BANK_ENTRY_STATUS.ignored,
    }));
    const row = (p: Planned, status: BankEntryStatus) => ({
      id: p.id,
      organization_id: organizationId,
      statement_id: statementId,
      account_id: doc.accountId,
      identity: p.item.identity,
      booking_date: p.item.bookingDate,
      amount_oere: p.item.direction === 'CRDT' ? p.item.amountMinor : -p.item.amountMinor,
      currency: p.item.currency,
      reference: p.item.reference === null ? null : p.item.reference.slice(0, 140),
      remittance_enc: p.item.remittance === null ? null : deps.keyring.encrypt(p.item.remittance),
      status,
    });
    const columns = ['id', 'organization_id', 'statement_id', 'account_id', 'identity', 'booking_date', 'amount_oere', 'currency', 'reference', 'remittance_enc', 'status'] as const;

    // First sightings, in identity order (the order every import takes the index's entries in).
    const byIdentity = [...planned].sort((a, b) => (a.item.identity < b.item.identity ? -1 : a.item.identity > b.item.identity ? 1 : 0));
    const inserted = new Set<string>();
    for (let i = 0; i < byIdentity.length; i += INSERT_CHUNK) {
      const chunk = byIdentity.slice(i, i + INSERT_CHUNK).map((p) => row(p, p.status));
      const rows = await tx<{ id: string }[]>`
        INSERT INTO bank_statement_entries ${tx(chunk, ...columns)}
        ON CONFLICT (organization_id, account_id, identity) WHERE status NOT IN ${BANK_ENTRY_LIFECYCLE.in(tx, [BANK_ENTRY_STATUS.duplicate])} DO NOTHING
        RETURNING id`;
      for (const r of rows) inserted.add(r.id);
    }
    const duplicates = planned.filter((p) => !inserted.has(p.id));
    for (const p of duplicates) p.status = BANK_ENTRY_STATUS.duplicate;
    for (let i = 0; i < duplicates.length; i += INSERT_CHUNK) {
      const chunk = duplicates.slice(i, i + INSERT_CHUNK).map((p) => row(p, BANK_ENTRY_STATUS.duplicate));
      await tx`INSERT INTO bank_statement_entries ${tx(chunk, ...columns)}`;
    }

    const candidates = planned.filter((p) => p.status === BANK_ENTRY_STATUS.unmatched);
    const booked = await matchAndBook(tx, deps, organizationId, doc.accountId, candidates, request.now);
    const statement = await findBankStatement(tx, organizationId, statementId);
    const receipts = deps.receiptDispatch;
    return {
      status: 201,
      data: statement,
      meta: {},
      location: `/v1/bank-statements/${statementId}`,
      ...(booked.length > 0 && receipts
        ? {
            // Handed on together, not one after the other: the answer waits for the hand-offs. One that fails is
            // picked up from the wake index like every lost hand-off.
            afterCommit: async () => {
              await Promise.allSettled(booked.slice(0, RECEIPTS_DISPATCHED_AT_ONCE).map((id) => receipts.dispatch(id)));
            },
          }
        : {}),
    };
  };
}

/** Decides the candidates in document order and books the matches; answers the booked payments' ids. */
async function matchAndBook(
  tx: Queryable,
  deps: BankStatementImportDeps,
  organizationId: string,
  accountId: string,
  candidates: Planned[],
  now: Date,
): Promise<string[]> {
  if (candidates.length === 0) return [];
  const texts = candidates.map((p) => ({ reference: p.item.reference, remittance: p.item.remittance, otherTexts: p.item.otherTexts }));
  const paymentIds = [...new Set(texts.flatMap(paymentIdCandidates))];
  const numbers = [...new Set(texts.flatMap(invoiceNumberCandidates))];
  if (paymentIds.length === 0 && numbers.length === 0) return [];

  // Which invoices the entries name, then those locked in id order and read again under the lock.
  const named = await tx<{ id: string }[]>`
    SELECT i.id FROM invoices i
    WHERE i.organization_id = ${organizationId} AND i.type = 'invoice'
      AND (i.fik_payment_id = ANY(${paymentIds}::text[])
           OR (i.number = ANY(${numbers.map(String)}::bigint[]) AND i.status IN ${INVOICE_LIFECYCLE.in(tx, OPEN_STATUSES)}))`;
  if (named.length === 0) return [];
  const ids = named.map((r) => r.id);
  await tx`SELECT i.id FROM invoices i WHERE i.organization_id = ${organizationId} AND i.id = ANY(${ids}::uuid[]) ORDER BY i.id FOR UPDATE OF i`;
  const t = balanceTerms(tx);
  const locked = await tx<{ id: string; number: number; status: string; fik_payment_id: string | null; balance_oere: number }[]>`
    SELECT i.id, i.number, i.status, i.fik_payment_id,
           invoice_balance_oere(i.gross_oere, ${t.fees}, ${t.paid}, ${t.credited})::bigint AS balance_oere
    FROM invoices i WHERE i.organization_id = ${organizationId} AND i.id = ANY(${ids}::uuid[])`;
  // An invoice whose issue is still being finished has its payment id already but takes no payment yet (the payment
  // route refuses it): its entries wait, unmatched.
  const payable = locked.filter((r) => INVOICE_LIFECYCLE.isState(r.status) && isIssued(r.status));
  const byPaymentId = new Map<string, string>();
  for (const r of payable) if (r.fik_payment_id !== null) byPaymentId.set(r.fik_payment_id, r.id);
  const openByNumber = new Map<number, OpenInvoice[]>();
  for (const r of locked) {
    if (INVOICE_LIFECYCLE.isState(r.status) && isOpen(r.status)) {
      openByNumber.set(r.number, [...(openByNumber.get(r.number) ?? []), { id: r.id, number: r.number, balanceOere: r.balance_oere }]);
    }
  }
  const openById = new Map([...openByNumber.values()].flat().map((i) => [i.id, i]));

  const today = await deps.clock.today(organizationId);
  const bookings: { entry: BookableEntry; invoiceId: string }[] = [];
  for (const p of candidates) {
    // A payment is never dated after today (the payment route refuses it): such an entry waits, unmatched.
    if (p.item.bookingDate === null || p.item.bookingDate > today) continue;
    const decision = decideMatch(
      { reference: p.item.reference, remittance: p.item.remittance, otherTexts: p.item.otherTexts, amountOere: p.item.amountMinor },
      { byPaymentId, openByNumber },
    );
    if (decision.invoiceId === null) continue;
    bookings.push({
      entry: { id: p.id, accountId, identity: p.item.identity, amountOere: p.item.amountMinor, bookingDate: p.item.bookingDate },
      invoiceId: decision.invoiceId,
    });
    // The next decision sees the balance this payment leaves; a settled invoice is no longer open.
    const inv = openById.get(decision.invoiceId);
    if (inv) {
      inv.balanceOere -= p.item.amountMinor;
      if (inv.balanceOere <= 0) {
        openById.delete(inv.id);
        const rest = openByNumber.get(inv.number)!.filter((i) => i.id !== inv.id);
        if (rest.length > 0) openByNumber.set(inv.number, rest);
        else openByNumber.delete(inv.number);
      }
    }
  }
  return bookInOrder(tx, deps, organizationId, bookings, now);
}

/**
 * Books the decided matches invoice by invoice (each invoice's entries in document order). Each booking's reads are
 * awaited, its writes are not: they travel with the next booking's statements and are settled together at the end.
 */
async function bookInOrder(
  tx: Queryable,
  deps: BankStatementImportDeps,
  organizationId: string,
  bookings: { entry: BookableEntry; invoiceId: string }[],
  now: Date,
): Promise<string[]> {
  const ordered = bookings.map((b, i) => ({ ...b, i })).sort((a, b) => (a.invoiceId < b.invoiceId ? -1 : a.invoiceId > b.invoiceId ? 1 : a.i - b.i));
  const writes: Promise<unknown>[] = [];
  const paymentIds: string[] = [];
  let failure: Error | undefined;
  for (const b of ordered) {
    try {
      const done = await bookEntry(tx, deps, organizationId, b.entry, b.invoiceId, { now });
      paymentIds.push(done.paymentId);
      writes.push(done.written);
    } catch (err) {
      failure = err as Error;
      break;
    }
  }
  // Never leave a write unobserved; the first failure is the import's.
  const results = await Promise.allSettled(writes);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason as Error;
  if (failure !== undefined) throw failure;
  return paymentIds;
}
