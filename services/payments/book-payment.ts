import type { Invoice } from '../../contracts/invoices.ts';
import type { Payment, PaymentOutcome, PaymentSource } from '../../contracts/payments.ts';
import type { Clock } from '../shared/clock.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { isUuid, uuidv7 } from '../shared/ids.ts';
import { recordEvent } from '../events/record-event.ts';
import { reconcilePastDue } from '../customers/past-due-transitions.ts';
import { invoiceSelect, toInvoice, type InvoiceRow } from '../invoices/invoice-queries.ts';
import { recordTimeline } from '../invoices/record-timeline.ts';
import { INVOICE_STATUS, isIssued, transitionInvoice } from '../invoices/invoice-lifecycle.ts';
import { recordCasePayment } from '../cases/take-due-case-step.ts';
import { postInterestOnSettlement } from '../interest/post-interest.ts';
import { settlePayment } from './payment-outcome.ts';
import { activePlanIdSql } from '../payment-plans/payment-plan-queries.ts';
import { fillPaymentPlan } from '../payment-plans/fill-payment-plan.ts';
import { findPaymentByBookingKey, PAYMENT_COLUMNS, toPayment, type PaymentRow } from './payment-queries.ts';

export interface BookPaymentInput {
  source: PaymentSource;
  /**
   * What makes the payment unique within the organisation and channel, kept with it for as long as it exists: the
   * Idempotency-Key of a manual registration (`<key>:<index>` in a batch), the provider's payment id of a card or
   * mobile-wallet payment. A second booking with the same key books nothing and answers with the first payment.
   */
  bookingKey: string;
  amountOere: number;
  /** The day the money was received; left out: the organisation's today, read with the invoice (a provider's payment). */
  paymentDate?: string;
}

export interface BookedPayment {
  payment: Payment;
  /** The invoice after the payment (on a replay: as it is now). */
  invoice: Invoice;
  outcome: PaymentOutcome;
  /** True when the key had booked this payment already and nothing new was booked. */
  replayed: boolean;
  /**
   * With `deferWrites`: the booking's writes, started and not awaited, for the caller to settle with its response store
   * before committing (a failure, such as the booking key taken meanwhile, rolls the transaction back).
   */
  written?: Promise<unknown>;
}

/**
 * Books one payment on an invoice, exactly once per booking key (docs/api-conventions.md, "Payments and balances"), in
 * the caller's transaction: the manual registration route runs it inside `mutate`, a payment provider's callback in a
 * transaction of its own.
 *
 * The invoice row is locked first and its balance read in a later statement, so that statement's snapshot already
 * holds every payment committed by earlier lock holders: concurrent payments on one invoice see each other's
 * amounts, the balances they compute are exact, and exactly one of them can bring the balance to 0. The booking key
 * is looked up under the same lock, so a repeated booking on the invoice (a retry, a provider's duplicate callback,
 * with or without `mutate`'s key lock) finds the first one; the unique index on the key is the final guard when one
 * key is used on two invoices at the same moment.
 */
export async function bookPayment(
  sql: Queryable,
  deps: { clock: Clock },
  organizationId: string,
  invoiceId: string,
  input: BookPaymentInput,
  opts: { deferWrites?: { now: Date } } = {},
): Promise<BookedPayment> {
  if (!isUuid(invoiceId)) {
    const earlier = await findPaymentByBookingKey(sql, organizationId, input.source, input.bookingKey);
    if (earlier) conflict();
    throw notFound('invoice_not_found', 'invoice');
  }
  // Sent together in this order (one round trip; the server runs them one after the other): the lock, then the
  // reads, which start only once the lock is held and so see every payment committed by an earlier holder. A query
  // starts when it is first awaited, so `execute()` fixes the order here rather than the order promises settle in.
  // The organisation's today comes from the clock meanwhile.
  // With the lock, whether the customer was announced past due: only then can this payment be a transition (a payment
  // never makes a customer past due), which is reconciled after the payment's writes, in this transaction.
  // And the invoice's active payment plan, if any: the payment fills its instalments.
  const lockQuery = sql<{ id: string; customer_past_due: boolean; active_plan_id: string | null }[]>`
    SELECT i.id, (SELECT c.past_due FROM customers c WHERE c.organization_id = i.organization_id AND c.id = i.customer_id) AS customer_past_due,
           ${activePlanIdSql(sql)} AS active_plan_id
    FROM invoices i WHERE i.organization_id = ${organizationId} AND i.id = ${invoiceId} FOR UPDATE OF i`.execute();
  // clock_timestamp(): the database's time when this read runs, which is after the lock is held, so payments on one
  // invoice get increasing registration times in the order they are booked.
  const rowQuery = sql<(InvoiceRow & { registered_at: Date })[]>`
    SELECT ${invoiceSelect(sql)}, clock_timestamp() AS registered_at
    FROM invoices i WHERE i.organization_id = ${organizationId} AND i.id = ${invoiceId}`.execute();
  const earlierQuery = sql<PaymentRow[]>`
    SELECT ${sql(PAYMENT_COLUMNS)} FROM payments
    WHERE organization_id = ${organizationId} AND source = ${input.source} AND booking_key = ${input.bookingKey}`.execute();
  const [[locked], [row], [earlier], today] = await Promise.all([lockQuery, rowQuery, earlierQuery, deps.clock.today(organizationId)]);
  const paymentDate = input.paymentDate ?? today;
  if (earlier) {
    // The key booked a payment before. The same request (invoice, amount, date) gets that payment back, with the
    // invoice as it is now; anything else under the key is a different payment, which needs a key of its own.
    const same = earlier.invoice_id === invoiceId.toLowerCase() && earlier.amount_oere === input.amountOere && earlier.payment_date === paymentDate;
    if (!same || !row) conflict();
    return { payment: toPayment(earlier), invoice: toInvoice(row), outcome: earlier.outcome, replayed: true };
  }
  if (!locked || !row) throw notFound('invoice_not_found', 'invoice');
  if (row.type === 'creditNote') throw new DomainError('credit_note_not_payable', 'A credit note is not payable; register the payment on an invoice.');
  if (!isIssued(row.status)) {
    throw new DomainError('invoice_not_issued', 'Payments can only be registered on an issued invoice.');
  }
  if (paymentDate > today) {
    throw new DomainError('payment_date_in_future', `The payment date ${paymentDate} is after today (${today}).`, {
      details: [{ path: '/paymentDate', message: `must not be after ${today}` }],
    });
  }

  // The payment that clears the principal of an overdue invoice first posts the interest accrued up to its date (when
  // the organisation charges it): the balance it settles against, and the invoice it answers with, include it.
  const interestOere = await postInterestOnSettlement(sql, organizationId, row, paymentDate, input.amountOere, row.registered_at);
  if (interestOere !== null) {
    row.fees_oere += interestOere;
    row.interest_oere += interestOere;
    if (row.interest_posted_through === null || row.interest_posted_through < paymentDate) row.interest_posted_through = paymentDate;
  }
  const settlement = settlePayment(toInvoice(row).balanceOere, input.amountOere);
  // Registered at the moment read under the invoice's lock, on the database's clock like every other timestamp: the
  // id (time-ordered), createdAt and the timeline entry carry it, so lists newest first by id are newest first by
  // registration time, and concurrent payments on one invoice appear in the order they were booked (the
  // transaction's start would not do: a transaction that waited for the lock started before the one it waited for).
  const registeredAt = row.registered_at;
  const id = uuidv7(registeredAt.getTime());
  const status = settlement.settles ? 'paid' : row.status;
  // Deferred, the writes travel with the caller's response store (before its COMMIT), and the answer is built without their
  // results: the now() they write (the invoice's updated_at) is the transaction's timestamp, which the caller knows.
  const updatedAt = opts.deferWrites ? opts.deferWrites.now : undefined;
  // A booking key used meanwhile on another invoice (the key was free when looked up under this invoice's lock)
  // violates the unique index: the statement fails, the transaction rolls back, and the caller is told it conflicts.
  const insertPayment = sql<PaymentRow[]>`
      INSERT INTO payments (id, organization_id, invoice_id, customer_id, source, booking_key, amount_oere, payment_date, outcome, surplus_oere, created_at)
      VALUES (${id}, ${organizationId}, ${row.id}, ${row.customer_id}, ${input.source}, ${input.bookingKey}, ${input.amountOere},
              ${paymentDate}, ${settlement.outcome}, ${settlement.surplusOere}, ${registeredAt})
      RETURNING ${sql(PAYMENT_COLUMNS)}`.execute();
  // Only a settling payment changes the status (to paid, from an open one). The row is locked and was read as issued
  // with a positive balance, so a refusal here is a broken invariant (a `paid` invoice that still owed), not a request
  // to answer: it rolls the payment back.
  const updateInvoice: Promise<{ updated_at: Date }> = settlement.settles
    ? transitionInvoice(sql, organizationId, row.id, 'settle', {
        refused: () => new Error(`invoice ${row.id} owes ${toInvoice(row).balanceOere} øre but is not open (${row.status})`),
      })
    : sql<{ updated_at: Date }[]>`
        UPDATE invoices SET updated_at = now()
        WHERE organization_id = ${organizationId} AND id = ${row.id}
        RETURNING updated_at`.execute().then(([updated]) => updated!);
  const writes = [
    insertPayment,
    updateInvoice,
    recordEvent(sql, {
      organizationId,
      type: 'payment.received',
      entityId: id,
      data: {
        invoiceId: row.id,
        amountOere: input.amountOere,
        paymentDate,
        source: input.source,
        externalReference: row.external_reference,
      },
    }),
    settlement.settles
      ? recordEvent(sql, {
          organizationId,
          type: 'invoice.paid',
          entityId: row.id,
          data: {
            invoiceId: row.id,
            number: row.number!,
            paymentId: id,
            paidOere: row.paid_oere + input.amountOere,
            balanceOere: settlement.balanceAfterOere,
            externalReference: row.external_reference,
          },
        })
      : Promise.resolve(undefined),
    recordTimeline(sql, organizationId, row.id, 'payment', {
      paymentId: id,
      amountOere: input.amountOere,
      paymentDate,
      source: input.source,
      outcome: settlement.outcome,
    }, registeredAt),
    // An invoice with an active payment plan: the payment fills its instalments, and may complete it.
    locked.active_plan_id !== null
      ? fillPaymentPlan(sql, organizationId, locked.active_plan_id, input.amountOere, settlement.settles, today, registeredAt)
      : Promise.resolve(undefined),
    // An invoice in collections: its case hears of the payment (sag.betaling_modtaget), and closes when it settles.
    row.status === INVOICE_STATUS.collections
      ? recordCasePayment(sql, organizationId, row.id, input.amountOere, settlement.settles)
      : Promise.resolve(undefined),
  ];
  // Settled together. The booking key taken meanwhile is the answer whichever failure arrives first: the other
  // statements then fail only because it aborted the transaction.
  const written: Promise<[PaymentRow[], { updated_at: Date }]> = Promise.allSettled(writes).then(async (results) => {
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.some(bookingKeyTaken)) conflict();
    if (failures.length > 0) throw failures[0];
    // Only an overdue invoice counts towards pastDue: a payment on any other cannot settle the customer.
    if (locked.customer_past_due && row.due_date !== null && row.due_date < today) {
      await reconcilePastDue(sql, organizationId, today, [row.customer_id]);
    }
    return Promise.all([insertPayment, updateInvoice]);
  });
  // The row read under the lock plus this payment is the invoice as committed: no second read needed.
  const accrual = row.accrual && { ...row.accrual, payments: [...row.accrual.payments, [paymentDate, input.amountOere] as [string, number]] };
  const invoiceAfter = (at: Date) => toInvoice({ ...row, paid_oere: row.paid_oere + input.amountOere, status, updated_at: at, accrual });
  if (updatedAt) {
    const payment: Payment = toPayment({
      id, invoice_id: row.id, customer_id: row.customer_id, source: input.source, booking_key: input.bookingKey,
      amount_oere: input.amountOere, payment_date: paymentDate, outcome: settlement.outcome,
      surplus_oere: settlement.surplusOere, created_at: registeredAt,
    });
    return { payment, invoice: invoiceAfter(updatedAt), outcome: settlement.outcome, replayed: false, written };
  }
  const [[inserted], updated] = await written;
  return { payment: toPayment(inserted!), invoice: invoiceAfter(updated.updated_at), outcome: settlement.outcome, replayed: false };
}

const bookingKeyTaken = (err: unknown): boolean => {
  const e = err as { code?: string; constraint_name?: string };
  return e.code === '23505' && e.constraint_name === 'payments_booking_key';
};

function conflict(): never {
  throw new DomainError(
    'idempotency_conflict',
    'This key already booked a payment with a different invoice, amount or payment date; use a new key for a new payment.',
  );
}
