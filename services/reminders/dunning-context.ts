import { principalOutstandingOere } from '../invoices/invoice-balance.ts';
import { REMINDABLE_STATUSES, type InvoiceStatus } from '../invoices/invoice-lifecycle.ts';
import { findInvoiceRow, type InvoiceRow } from '../invoices/invoice-queries.ts';
import type { Queryable } from '../shared/db.ts';
import {
  type CustomerType,
  type DunningFacts,
  type GraphStep,
  type LimitationWarning,
  planFromGraph,
  planFromSettings,
  type ReminderPlan,
  type TakenReminder,
} from './reminder-policy.ts';
import { loadReminderSettings, type ReminderSettings } from './reminder-settings.ts';
import { breaksOn } from '../payment-plans/payment-plan-policy.ts';
import { latestPaymentPlan, type PaymentPlanRow } from '../payment-plans/payment-plan-queries.ts';
import { PAYMENT_PLAN_STATUS, RESUMING_PLAN_STATUSES } from '../payment-plans/payment-plan-lifecycle.ts';

/** The locked invoice and everything a decision about it needs, read in the transaction. */
export interface DunningContext {
  organizationId: string;
  invoice: InvoiceRow;
  settings: ReminderSettings;
  /**
   * What the invoice's dunning follows: the flow version it was pinned to at issue (its steps for the customer's
   * type), or, unpinned, the reminder settings as they are now.
   */
  plan: ReminderPlan;
  /** The pinned flow version, null when the plan is the reminder settings. */
  pinnedFlow: { id: string; key: string; version: number } | null;
  facts: DunningFacts;
  /** The business now and today of the organisation. */
  now: Date;
  today: string;
  customer: { type: CustomerType; hasEmail: boolean; hasAddress: boolean };
  /** The invoice's latest payment plan (any status), undefined when it never had one. */
  paymentPlan: PaymentPlanRow | undefined;
}

interface ReminderRow {
  id: string;
  type: 'payment_reminder' | 'reminder';
  reminder_number: number | null;
  fee_oere: number;
  sent_on: string;
  delivery: 'pending' | 'done' | 'none';
  document_sha256: Buffer | null;
}

/**
 * Locks the invoice (unless `lock: false`, for a read) and reads the facts; undefined when there is no such invoice
 * of the organisation.
 */
export async function loadDunningContext(sql: Queryable, organizationId: string, invoiceId: string, opts: { lock: boolean } = { lock: true }): Promise<DunningContext | undefined> {
  const invoice = await findInvoiceRow(sql, organizationId, invoiceId, { lock: opts.lock });
  if (!invoice) return undefined;
  const [clock] = await sql<{ now: Date; today: string }[]>`SELECT business_now(${organizationId}) AS now, business_today(${organizationId})::text AS today`;
  const settings = await loadReminderSettings(sql, organizationId);
  const taken = await sql<ReminderRow[]>`
    SELECT id, type, reminder_number, fee_oere, sent_on::text AS sent_on, delivery, document_sha256 FROM reminders
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}
    ORDER BY sent_on, id`;
  const warned = await sql<{ days: number }[]>`
    SELECT (data->>'daysBefore')::int AS days FROM invoice_timeline
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND code = 'limitation_warning'`;
  const [customer] = await sql<{ type: CustomerType; has_email: boolean; has_address: boolean }[]>`
    SELECT type, email_enc IS NOT NULL AS has_email,
           coalesce(address->>'street', '') <> '' AND coalesce(address->>'postalCode', '') <> '' AND coalesce(address->>'city', '') <> '' AS has_address
    FROM customers WHERE organization_id = ${organizationId} AND id = ${invoice.customer_id}`;
  // The pin (migration 019): set at issue, never moved by a later activation.
  const [pinned] = await sql<{ id: string; flow_key: string; version: number; graph: { steps: GraphStep[] } }[]>`
    SELECT v.id, v.flow_key, v.version, v.graph FROM invoices i
    JOIN reminder_flow_versions v ON v.organization_id = i.organization_id AND v.id = i.reminder_flow_version_id
    WHERE i.organization_id = ${organizationId} AND i.id = ${invoice.id}`;
  const paymentPlan = await latestPaymentPlan(sql, organizationId, invoice.id);
  const customerType = customer?.type ?? 'company';
  return {
    organizationId,
    invoice,
    settings,
    plan: pinned ? planFromGraph(pinned.graph, customerType) : planFromSettings(settings),
    pinnedFlow: pinned ? { id: pinned.id, key: pinned.flow_key, version: pinned.version } : null,
    now: clock!.now,
    today: clock!.today,
    customer: { type: customerType, hasEmail: customer?.has_email ?? false, hasAddress: customer?.has_address ?? false },
    paymentPlan,
    facts: {
      ...planFacts(paymentPlan),
      dueDate: invoice.due_date ?? clock!.today,
      remindable: invoice.type === 'invoice' && (REMINDABLE_STATUSES as readonly InvoiceStatus[]).includes(invoice.status),
      principalOutstandingOere: principalOutstandingOere({ grossOere: invoice.gross_oere, paidOere: invoice.paid_oere, creditedOere: invoice.credited_oere }),
      taken: taken.map((t): TakenReminder => ({ type: t.type, reminderNumber: t.reminder_number, feeOere: t.fee_oere, sentOn: t.sent_on })),
      warned: warned.map((w) => w.days as LimitationWarning),
      ...(invoice.issue_date ? { startedOn: invoice.issue_date } : {}),
    },
  };
}

/** What the invoice's latest payment plan means for its dunning (reminder-policy.ts's `activePlan` and `resumesOn`). */
function planFacts(plan: PaymentPlanRow | undefined): Pick<DunningFacts, 'activePlan' | 'resumesOn'> {
  if (!plan) return {};
  if (plan.status === PAYMENT_PLAN_STATUS.active) return { activePlan: { breaksOn: breaksOn(plan.installments, plan.paid_oere) } };
  if ((RESUMING_PLAN_STATUSES as readonly string[]).includes(plan.status) && plan.ended_on !== null) return { resumesOn: plan.ended_on };
  return {};
}

/**
 * The instant a step dated `on` is written with: as if the time had passed, a step the clock caught up with (a day
 * before the business today) carries its own day, at the time of day it is now.
 */
export function stepInstant(ctx: Pick<DunningContext, 'now' | 'today'>, on: string): Date {
  const lateDays = Math.round((Date.parse(`${ctx.today}T00:00:00Z`) - Date.parse(`${on}T00:00:00Z`)) / 86_400_000);
  return new Date(ctx.now.getTime() - lateDays * 86_400_000);
}
