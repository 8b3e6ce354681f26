import type { Clock } from '../shared/clock.ts';
import type { Queryable } from '../shared/db.ts';
import { bookPayment, type BookedPayment } from '../payments/book-payment.ts';
import { BANK_ENTRY_LIFECYCLE } from './bank-entry-lifecycle.ts';
import { entryBookingKey } from './bank-statement-queries.ts';

export interface BookableEntry {
  id: string;
  accountId: string;
  identity: string;
  /** A DKK credit's amount, in øre. */
  amountOere: number;
  /** The payment's date; null: the organisation's today. */
  bookingDate: string | null;
}

/**
 * Books an `unmatched` entry's payment on an invoice and moves the entry to `matched` with it, in the caller's
 * transaction: the import's rules and the bookkeeper's match both end here. The payment is booked by `bookPayment`
 * exactly as the payment route books one (outcomes, status, events, timeline), with source `bank` and the entry's
 * account and identity as its booking key. Its writes and the entry's move are started and not awaited
 * (`written`): the caller settles them before it commits.
 */
export async function bookEntry(
  sql: Queryable,
  deps: { clock: Clock },
  organizationId: string,
  entry: BookableEntry,
  invoiceId: string,
  opts: { now: Date },
): Promise<{ paymentId: string; booked: BookedPayment; written: Promise<unknown> }> {
  const booked = await bookPayment(
    sql,
    deps,
    organizationId,
    invoiceId,
    {
      source: 'bank',
      bookingKey: entryBookingKey({ account_id: entry.accountId, identity: entry.identity }),
      amountOere: entry.amountOere,
      ...(entry.bookingDate !== null ? { paymentDate: entry.bookingDate } : {}),
    },
    { deferWrites: { now: opts.now } },
  );
  const moved = BANK_ENTRY_LIFECYCLE.transition(sql, entry.id, 'match', {
    organizationId,
    set: sql`invoice_id = ${booked.invoice.id}, payment_id = ${booked.payment.id}`,
  });
  // The payment row first: the entry's foreign key names it.
  const written = Promise.all([booked.written ?? Promise.resolve(), moved]);
  return { paymentId: booked.payment.id, booked, written };
}
