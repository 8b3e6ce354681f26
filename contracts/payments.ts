import { Type, type Static } from 'typebox';
import { DateString, ListQuery, Nullable, Uuid } from './common.ts';

/**
 * The channel a payment came through (docs/api-conventions.md, "Payments and balances"): registered by the caller,
 * paid by card or mobile wallet, or read from a bank statement (docs/bank-payments.md).
 */
export const PaymentSource = Type.Union([Type.Literal('manual'), Type.Literal('card'), Type.Literal('mobilepay'), Type.Literal('bank')], {
  title: 'PaymentSource',
  description:
    '`manual` (registered through the API), `card` or `mobilepay` (paid on the hosted page), `bank` (a bank statement entry, ' +
    'matched on import or by hand)',
});
export type PaymentSource = Static<typeof PaymentSource>;

/** What a payment did to its invoice (docs/api-conventions.md, "Payments and balances", Outcomes). */
export const PaymentOutcome = Type.Union([Type.Literal('partial'), Type.Literal('paid_in_full'), Type.Literal('registered')], {
  title: 'PaymentOutcome',
  description:
    '`partial`: a balance remains; `paid_in_full`: the balance is now exactly 0; `registered`: the invoice was settled ' +
    'already or the payment went beyond its balance, and the surplus is kept as customer credit',
});
export type PaymentOutcome = Static<typeof PaymentOutcome>;

export const PaymentCreate = Type.Object(
  {
    amountOere: Type.Integer({ minimum: 1, maximum: 100_000_000_000, description: 'Amount received, in øre' }),
    paymentDate: Type.String({ format: 'date', description: 'The day the money was received, YYYY-MM-DD; not after the organisation\'s today' }),
  },
  { additionalProperties: false, title: 'PaymentCreate' },
);
export type PaymentCreate = Static<typeof PaymentCreate>;

export const Payment = Type.Object(
  {
    id: Uuid,
    invoiceId: Uuid,
    customerId: Uuid,
    source: PaymentSource,
    amountOere: Type.Integer(),
    paymentDate: DateString,
    outcome: PaymentOutcome,
    surplusOere: Type.Integer({ description: 'The part of the amount beyond the invoice\'s balance when it was booked, held as customer credit' }),
    providerPaymentId: Nullable(Type.String({ description: 'The payment provider\'s id of a card or mobile-wallet payment; null for manual and bank payments' })),
    createdAt: Type.String({ format: 'date-time', description: 'When the payment was registered' }),
  },
  { title: 'Payment' },
);
export type Payment = Static<typeof Payment>;

export const PaymentListQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
export type PaymentListQuery = Static<typeof PaymentListQuery>;

/**
 * The customer balance (docs/api-conventions.md, "Customer balance"); computed from invoices, fees and payments on
 * every read.
 */
export const CustomerBalance = Type.Object(
  {
    customerId: Uuid,
    asOf: Type.String({ format: 'date', description: "The organisation's today the balance was computed for" }),
    outstandingOere: Type.Integer({ description: 'Sum of the positive balances of issued invoices' }),
    overdueOere: Type.Integer({ description: 'Sum of the positive balances of open invoices past their due date' }),
    overdueCount: Type.Integer({ description: 'How many open invoices are past their due date with a positive balance' }),
    oldestDueDate: Nullable(DateString),
    daysOverdue: Type.Integer({ description: 'Days from the oldest overdue due date to today; 0 when nothing is overdue' }),
    collectionsOere: Type.Integer({ description: 'Sum of the positive balances of invoices handed over to debt collection' }),
    creditOere: Type.Integer({ description: 'Sum of the negative balances (≤ 0): overpayments and credits the customer holds' }),
    pastDue: Type.Boolean({ description: 'overdueOere and daysOverdue both at or above the organisation\'s thresholds' }),
  },
  { title: 'CustomerBalance' },
);
export type CustomerBalance = Static<typeof CustomerBalance>;
