import type { EVENT_BLOCKS, EVENT_FAMILIES, EventType } from './events.ts';
import type { PaymentSource } from './payments.ts';

/**
 * Every event type with the family block its envelope carries and the shape of its `data`. `data` holds amounts,
 * dates, ids and the integrator's externalReference only: never names, e-mail addresses, phone numbers or CPR.
 *
 * Types nothing records yet (the subscription payment and payment-method events) have their family and an open payload;
 * the change that first records one gives it its payload here.
 */

export type EventFamily = (typeof EVENT_FAMILIES)[number];
export type EventBlock = (typeof EVENT_BLOCKS)[number];

/**
 * The envelope block of each family: its own, except a reminder's and a payment plan's, which are about their invoice
 * (the `invoice` block, the invoice's sekvensnummer), so an integrator following an invoice sees its reminders and
 * plans in the invoice's order.
 */
export const EVENT_FAMILY_BLOCK: { readonly [F in EventFamily]: EventBlock } = {
  invoice: 'invoice',
  payment: 'payment',
  customer: 'customer',
  subscription: 'subscription',
  sag: 'sag',
  reminder: 'invoice',
  payment_plan: 'invoice',
};

/** The payload of a type nothing records yet. */
export type UnspecifiedEventData = Record<string, unknown>;

/** An issued invoice: its number, dates and totals. */
export interface InvoiceIssuedData {
  invoiceId: string;
  number: number;
  customerId: string;
  issueDate: string;
  dueDate: string;
  netOere: number;
  vatOere: number;
  grossOere: number;
  externalReference: string | null;
}

/** The invoice's e-mail was handed to the mail server. */
export interface InvoiceSentData {
  invoiceId: string;
  number: number;
  /** `email`, or `einvoice` for a customer with an e-invoice address (delivered through the access point). */
  channel: 'email' | 'einvoice';
  externalReference: string | null;
}

/** A payment settled the invoice; `balanceOere` is below 0 when it overpaid. */
export interface InvoicePaidData {
  invoiceId: string;
  number: number;
  paymentId: string;
  paidOere: number;
  balanceOere: number;
  externalReference: string | null;
}

/** Recorded on the original invoice, naming the credit note that credits it. */
export interface InvoiceCreditedData {
  invoiceId: string;
  creditNoteId: string;
  creditNoteNumber: number;
  creditedOere: number;
  externalReference: string | null;
}

/**
 * A payment booked against an invoice (docs/api-conventions.md, "Payments and balances": `data: {invoiceId, amountOere,
 * paymentDate, source, externalReference}`).
 */
export interface PaymentReceivedData {
  invoiceId: string;
  amountOere: number;
  paymentDate: string;
  source: PaymentSource;
  externalReference: string | null;
}

/** The invoice's first reminder of any kind was taken: it is overdue (once per invoice). */
export interface InvoiceOverdueData {
  invoiceId: string;
  number: number;
  dueDate: string;
  /** The balance when the reminder was taken, its fee included. */
  balanceOere: number;
  reminderId: string;
  externalReference: string | null;
}

/**
 * A reminder of an invoice (the payment reminder, a numbered reminder, the demand letter), automatic or manual:
 * `reminder.sent` once its delivery succeeded, `reminder.failed` once it is recorded as failed. The amounts are the
 * reminder's charges (services/reminders/reminder-charges.ts); `deadline` is the new payment deadline it states.
 */
export interface ReminderEventData {
  reminderId: string;
  invoiceId: string;
  customerId: string;
  type: 'payment_reminder' | 'reminder';
  /** 1..3 for a numbered reminder, null for the payment reminder. */
  reminderNumber: number | null;
  feeOere: number;
  interestOere: number;
  compensationOere: number;
  demandLetter: boolean;
  /** null for a reminder that had no channel to go by (`customer_email_missing`, `customer_address_missing`). */
  channel: 'email' | 'letter' | null;
  deadline: string;
}

/** A failed reminder names why: `customer_email_missing`, `customer_address_missing`, `mail_rejected`, `mail_undeliverable`, … */
export interface ReminderFailedData extends ReminderEventData {
  failureCode: string;
}

/** A customer crossing the past-due threshold either way, with the overdue figures as of `asOf`. */
export interface CustomerPastDueData {
  customerId: string;
  asOf: string;
  overdueOere: number;
  overdueCount: number;
  oldestDueDate: string | null;
  daysOverdue: number;
  externalReference: string | null;
}

/**
 * Every `sag.*` event: the case's state after the change, no personal data (docs/collections.md, "Case events").
 * `fakturaId` is the case's invoice (null for a case from POST /v1/cases), `externalReference` the case's own.
 */
export interface CaseEventData {
  caseNumber: number;
  state: 'OPRETTET' | 'PAAKRAV_SENDT' | 'OVERDRAGET' | 'AFSLUTTET' | 'TILBAGEKALDT';
  status: 'aktiv' | 'afventer' | 'lukket';
  fakturaId: string | null;
  externalReference: string | null;
}

/**
 * Every `subscription.*` event the API and the run write: the subscription as of after the change
 * (docs/api-conventions.md, "Subscriptions"). `nextInvoiceDate` is null while paused, cancelled or ended.
 */
export interface SubscriptionEventData {
  customerId: string;
  status: 'active' | 'paused' | 'cancelled';
  nextInvoiceDate: string | null;
  externalReference: string | null;
}

/** A period was invoiced: the subscription's fields plus the invoice and its period. */
export interface SubscriptionInvoicedData extends SubscriptionEventData {
  invoiceId: string;
  periodStart: string;
  periodEnd: string;
}

/** A payment on the case's invoice, with its amount. */
export interface CasePaymentReceivedData extends CaseEventData {
  amountOere: number;
}

/** A payment plan of an invoice was made, completed (every instalment paid), broken or cancelled (docs/reminders.md, "Payment plans"). */
export interface PaymentPlanEventData {
  paymentPlanId: string;
  invoiceId: string;
  customerId: string;
}

interface Entry<F extends EventFamily, D> {
  family: F;
  data: D;
}

/** Event type → its family and its `data`. */
export interface EventCatalogue {
  'invoice.issued': Entry<'invoice', InvoiceIssuedData>;
  'invoice.sent': Entry<'invoice', InvoiceSentData>;
  'invoice.paid': Entry<'invoice', InvoicePaidData>;
  'invoice.overdue': Entry<'invoice', InvoiceOverdueData>;
  'invoice.credited': Entry<'invoice', InvoiceCreditedData>;
  'invoice.collections': Entry<'invoice', UnspecifiedEventData>;
  'payment.received': Entry<'payment', PaymentReceivedData>;
  'customer.past_due': Entry<'customer', CustomerPastDueData>;
  'customer.settled': Entry<'customer', CustomerPastDueData>;
  'subscription.created': Entry<'subscription', SubscriptionEventData>;
  'subscription.updated': Entry<'subscription', SubscriptionEventData>;
  'subscription.paused': Entry<'subscription', SubscriptionEventData>;
  'subscription.resumed': Entry<'subscription', SubscriptionEventData>;
  'subscription.cancelled': Entry<'subscription', SubscriptionEventData>;
  'subscription.ended': Entry<'subscription', SubscriptionEventData>;
  'subscription.invoiced': Entry<'subscription', SubscriptionInvoicedData>;
  'subscription.payment_succeeded': Entry<'subscription', UnspecifiedEventData>;
  'subscription.payment_failed': Entry<'subscription', UnspecifiedEventData>;
  'subscription.payment_method.attached': Entry<'subscription', UnspecifiedEventData>;
  'subscription.payment_method.detached': Entry<'subscription', UnspecifiedEventData>;
  'subscription.payment_method.expiring': Entry<'subscription', UnspecifiedEventData>;
  'sag.oprettet': Entry<'sag', CaseEventData>;
  'sag.paakrav_sendt': Entry<'sag', CaseEventData>;
  'sag.overdraget': Entry<'sag', CaseEventData>;
  'sag.betaling_modtaget': Entry<'sag', CasePaymentReceivedData>;
  'sag.afsluttet': Entry<'sag', CaseEventData>;
  'sag.tilbagekaldt': Entry<'sag', CaseEventData>;
  'sag.status_aendret': Entry<'sag', CaseEventData>;
  'reminder.sent': Entry<'reminder', ReminderEventData>;
  'reminder.failed': Entry<'reminder', ReminderFailedData>;
  'payment_plan.created': Entry<'payment_plan', PaymentPlanEventData>;
  'payment_plan.completed': Entry<'payment_plan', PaymentPlanEventData>;
  'payment_plan.broken': Entry<'payment_plan', PaymentPlanEventData>;
  'payment_plan.cancelled': Entry<'payment_plan', PaymentPlanEventData>;
}

/** The `data` of an event of type T. */
export type EventData<T extends EventType> = EventCatalogue[T]['data'];

/**
 * The family of every event type, at run time. Its type ties it to the catalogue above, and the catalogue's keys to
 * EVENT_TYPES, so a type added to one and not the others fails to compile.
 */
export const EVENT_TYPE_FAMILY: { readonly [T in EventType]: EventCatalogue[T]['family'] } = {
  'invoice.issued': 'invoice',
  'invoice.sent': 'invoice',
  'invoice.paid': 'invoice',
  'invoice.overdue': 'invoice',
  'invoice.credited': 'invoice',
  'invoice.collections': 'invoice',
  'payment.received': 'payment',
  'customer.past_due': 'customer',
  'customer.settled': 'customer',
  'subscription.created': 'subscription',
  'subscription.updated': 'subscription',
  'subscription.paused': 'subscription',
  'subscription.resumed': 'subscription',
  'subscription.cancelled': 'subscription',
  'subscription.ended': 'subscription',
  'subscription.invoiced': 'subscription',
  'subscription.payment_succeeded': 'subscription',
  'subscription.payment_failed': 'subscription',
  'subscription.payment_method.attached': 'subscription',
  'subscription.payment_method.detached': 'subscription',
  'subscription.payment_method.expiring': 'subscription',
  'sag.oprettet': 'sag',
  'sag.paakrav_sendt': 'sag',
  'sag.overdraget': 'sag',
  'sag.betaling_modtaget': 'sag',
  'sag.afsluttet': 'sag',
  'sag.tilbagekaldt': 'sag',
  'sag.status_aendret': 'sag',
  'reminder.sent': 'reminder',
  'reminder.failed': 'reminder',
  'payment_plan.created': 'payment_plan',
  'payment_plan.completed': 'payment_plan',
  'payment_plan.broken': 'payment_plan',
  'payment_plan.cancelled': 'payment_plan',
};

// The catalogue has exactly the types of EVENT_TYPES: neither side has a key the other lacks.
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _catalogueCoversEventTypes: Exact<keyof EventCatalogue, EventType> = true;
