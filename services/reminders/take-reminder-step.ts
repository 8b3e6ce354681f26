import { WORK } from '../../contracts/workflows.ts';
import { clearWake, scheduleWake } from '../clock/wake-index.ts';
import { reconcilePastDue } from '../customers/past-due-transitions.ts';
import { recordEvent } from '../events/record-event.ts';
import { principalOutstandingOere, rowBalanceOere } from '../invoices/invoice-balance.ts';
import { transitionInvoice } from '../invoices/invoice-lifecycle.ts';
import { findInvoiceRow, type InvoiceRow } from '../invoices/invoice-queries.ts';
import { recordTimeline } from '../invoices/record-timeline.ts';
import { paakravDeadline, timeBarredOn } from '../law/danish-law.ts';
import type { Queryable } from '../shared/db.ts';
import { isUuid, uuidv7 } from '../shared/ids.ts';
import {
  arrearsStart,
  decideFee,
  type DunningFacts,
  type CustomerType,
  type GraphStep,
  type LimitationWarning,
  type OverdueInterval,
  type PlanChannel,
  planFromGraph,
  planFromSettings,
  planReminderCount,
  type ReminderPlan,
  stepRule,
  type TakenReminder,
} from './reminder-policy.ts';
import { loadReminderSettings, type ReminderSettings } from './reminder-settings.ts';
import { lightLogoNow } from '../branding/document-logo.ts';

/**
 * Taking a reminder step, in the caller's transaction with the invoice's row locked: the engine's automatic steps
 * (take-due-dunning-step.ts) and the ad-hoc `POST …/reminders` share this, so a manual and an automatic reminder
 * racing for one invoice are serialised on its row and numbered once (the unique indexes of `reminders` back it).
 *
 * One transaction writes the reminder row, its fee (an invoice_fees row), the timeline entry, the invoice's move to
 * `overdue` with `invoice.overdue` on its first reminder of any kind, `collections_ready` after the plan's last
 * reminder, and the customer's past-due transition that the fee may cause. The document and its delivery follow
 * after commit, as durable steps (the row's `delivery` is `pending` until then).
 */

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
    facts: {
      dueDate: invoice.due_date ?? clock!.today,
      remindable: invoice.type === 'invoice' && (invoice.status === 'issued' || invoice.status === 'overdue'),
      principalOutstandingOere: principalOutstandingOere({ grossOere: invoice.gross_oere, paidOere: invoice.paid_oere, creditedOere: invoice.credited_oere }),
      taken: taken.map((t): TakenReminder => ({ type: t.type, reminderNumber: t.reminder_number, feeOere: t.fee_oere, sentOn: t.sent_on })),
      warned: warned.map((w) => w.days as LimitationWarning),
      ...(invoice.issue_date ? { startedOn: invoice.issue_date } : {}),
    },
  };
}

/**
 * One customer's reminder steps are taken one at a time, automatic and manual alike: their fees count together in
 * the customer's continuous arrears. Taken before the invoice's row lock, in this order everywhere (no deadlock).
 */
export async function lockCustomerDunning(sql: Queryable, organizationId: string, invoiceId: string): Promise<void> {
  if (!isUuid(invoiceId)) return;
  const [owner] = await sql<{ customer_id: string }[]>`SELECT customer_id FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  if (owner) await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`dunning:${owner.customer_id}`}, 0))`;
}

/** The oldest reminder of the invoice whose document or delivery is still to do. */
export async function unfinishedReminder(sql: Queryable, organizationId: string, invoiceId: string): Promise<{ id: string; delivery: 'pending' | 'none'; documented: boolean } | undefined> {
  const [row] = await sql<{ id: string; delivery: 'pending' | 'none'; documented: boolean }[]>`
    SELECT id, delivery, document_sha256 IS NOT NULL AS documented FROM reminders
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND (delivery = 'pending' OR document_sha256 IS NULL)
    ORDER BY sent_on, id LIMIT 1`;
  return row;
}

/**
 * The channel a reminder goes by under the step's channel rule, or why none: `email` needs an e-mail address,
 * `letter` a complete postal address, `email_or_letter` an e-mail address, else an address (the settings' rule is
 * `email_or_letter` with letter fallback on, `email` with it off).
 */
export function chooseChannel(
  ctx: Pick<DunningContext, 'customer'>,
  rule: PlanChannel,
): { channel: 'email' | 'letter' } | { channel: null; failureCode: 'customer_email_missing' | 'customer_address_missing' } {
  if (rule !== 'letter' && ctx.customer.hasEmail) return { channel: 'email' };
  if (rule === 'email') return { channel: null, failureCode: 'customer_email_missing' };
  if (!ctx.customer.hasAddress) return { channel: null, failureCode: 'customer_address_missing' };
  return { channel: 'letter' };
}

/** Fee-bearing reminders sent to the invoice's customer since their continuous arrears containing `on` began. */
async function arrearsFeeReminders(sql: Queryable, ctx: DunningContext, on: string): Promise<number> {
  const intervals = await sql<OverdueInterval[]>`
    SELECT (due_date + 1)::text AS from, settled_on::text AS until FROM invoices
    WHERE organization_id = ${ctx.organizationId} AND customer_id = ${ctx.invoice.customer_id} AND type = 'invoice'
      AND due_date IS NOT NULL AND due_date < ${on}::date AND status NOT IN ('draft', 'issuing')`;
  const start = arrearsStart(intervals, on);
  if (start === null) return 0;
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM reminders
    WHERE organization_id = ${ctx.organizationId} AND customer_id = ${ctx.invoice.customer_id} AND fee_oere > 0
      AND sent_on >= ${start}::date AND sent_on <= ${on}::date`;
  return row!.n;
}

export interface TakenStep {
  reminderId: string;
  type: 'payment_reminder' | 'reminder';
  reminderNumber: number | null;
  feeOere: number;
  channel: 'email' | 'letter' | null;
  status: 'sent' | 'failed';
  collectionsReady: boolean;
}

/**
 * Writes one reminder taken on `sentOn` (a planned date the clock has passed, or today), with the fee the law allows
 * on that date, by the channel the customer allows. `demandLetter` marks the plan's last reminder (the påkrav).
 */
export async function takeReminder(
  sql: Queryable,
  ctx: DunningContext,
  step: { type: 'payment_reminder' | 'reminder'; reminderNumber: number | null; sentOn: string; demandLetter: boolean; source: 'automatic' | 'manual' },
): Promise<TakenStep> {
  const org = ctx.organizationId;
  const invoice = ctx.invoice;
  // The plan's fee and channel rule for this step (the payment reminder is free); the law decides the fee itself.
  const rule = stepRule(ctx.plan, step);
  const channel = chooseChannel(ctx, rule.channel);
  // A step that cannot be delivered still counts as taken, but charges nothing.
  const fee =
    step.type === 'reminder' && channel.channel !== null
      ? decideFee({ effectiveFeeOere: rule.feeOere, dueDate: ctx.facts.dueDate, taken: ctx.facts.taken, arrearsFeeReminders: await arrearsFeeReminders(sql, ctx, step.sentOn) }, step.sentOn).feeOere
      : 0;
  // As if the time had passed: a step the clock caught up with carries its own day, at the time of day it is now.
  const lateDays = Math.round((Date.parse(`${ctx.today}T00:00:00Z`) - Date.parse(`${step.sentOn}T00:00:00Z`)) / 86_400_000);
  const sentAt = new Date(ctx.now.getTime() - lateDays * 86_400_000);
  const id = uuidv7(sentAt.getTime());
  let feeId: string | null = null;
  if (fee > 0) {
    feeId = uuidv7();
    await sql`
      INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere)
      VALUES (${feeId}, ${org}, ${invoice.id}, ${invoice.customer_id}, 'reminder', ${fee})`;
  }
  const status = channel.channel === null ? 'failed' : 'sent';
  await sql`
    INSERT INTO reminders (id, organization_id, invoice_id, customer_id, type, reminder_number, fee_oere, fee_id, channel, status,
                           failure_code, demand_letter, source, sent_on, sent_at, deadline, delivery, logo_sha256)
    VALUES (${id}, ${org}, ${invoice.id}, ${invoice.customer_id}, ${step.type}, ${step.reminderNumber}, ${fee}, ${feeId},
            ${channel.channel}, ${status}, ${channel.channel === null ? channel.failureCode : null}, ${step.demandLetter},
            ${step.source}, ${step.sentOn}::date, ${sentAt}, ${paakravDeadline(step.sentOn)}::date,
            ${channel.channel === null ? 'none' : 'pending'}, ${lightLogoNow(sql, org)})`;
  await recordTimeline(sql, org, invoice.id, 'reminder', {
    reminderId: id,
    type: step.type,
    reminderNumber: step.reminderNumber,
    feeOere: fee,
    channel: channel.channel,
    status,
  }, sentAt);
  if (invoice.status === 'issued') {
    await transitionInvoice(sql, org, invoice.id, 'remind', { refused: () => new Error(`invoice ${invoice.id} is not issued`) });
    await recordEvent(sql, {
      organizationId: org,
      type: 'invoice.overdue',
      entityId: invoice.id,
      data: {
        invoiceId: invoice.id,
        number: invoice.number!,
        dueDate: ctx.facts.dueDate,
        balanceOere: rowBalanceOere({ ...invoice, reminder_fee_oere: invoice.reminder_fee_oere + fee }),
        reminderId: id,
        externalReference: invoice.external_reference,
      },
    });
  }
  const collectionsReady = step.type === 'reminder' && step.reminderNumber !== null && step.reminderNumber >= planReminderCount(ctx.plan);
  if (collectionsReady) {
    const [marked] = await sql`
      UPDATE invoices SET collections_ready = true, updated_at = now()
      WHERE organization_id = ${org} AND id = ${invoice.id} AND NOT collections_ready RETURNING 1`;
    if (marked) await recordTimeline(sql, org, invoice.id, 'collections_ready', { reminderId: id }, sentAt);
  }
  // A fee moves what the customer owes overdue: announce a past-due transition it causes, in this transaction.
  if (fee > 0) await reconcilePastDue(sql, org, ctx.today, [invoice.customer_id]);
  return { reminderId: id, type: step.type, reminderNumber: step.reminderNumber, feeOere: fee, channel: channel.channel, status, collectionsReady };
}

/** Writes the limitation warning `daysBefore` days before the claim is time-barred (timeline only). */
export async function noteLimitationWarning(sql: Queryable, ctx: DunningContext, daysBefore: LimitationWarning, on: string): Promise<void> {
  const lateDays = Math.round((Date.parse(`${ctx.today}T00:00:00Z`) - Date.parse(`${on}T00:00:00Z`)) / 86_400_000);
  await recordTimeline(
    sql,
    ctx.organizationId,
    ctx.invoice.id,
    'limitation_warning',
    { daysBefore, timeBarredOn: timeBarredOn(ctx.facts.dueDate) },
    new Date(ctx.now.getTime() - lateDays * 86_400_000),
  );
}

/** Lists the invoice's lifecycle as due at the start of `date` (business time), or ends it. */
export async function scheduleDunning(sql: Queryable, organizationId: string, invoiceId: string, date: string | null): Promise<void> {
  const target = WORK.dunning(organizationId, invoiceId);
  if (date === null) {
    await clearWake(sql, target);
    return;
  }
  const [start] = await sql<{ at: Date }[]>`SELECT (${date}::date)::timestamp AT TIME ZONE 'Europe/Copenhagen' AS at`;
  await scheduleWake(sql, organizationId, target, start!.at);
}
