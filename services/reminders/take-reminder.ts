import { lightLogoNow } from '../branding/document-logo.ts';
import { reconcilePastDue } from '../customers/past-due-transitions.ts';
import { recordEvent } from '../events/record-event.ts';
import { rowBalanceOere } from '../invoices/invoice-balance.ts';
import { INVOICE_LIFECYCLE, transitionInvoice, UNISSUED_STATUSES } from '../invoices/invoice-lifecycle.ts';
import { recordTimeline } from '../invoices/record-timeline.ts';
import { paakravDeadline } from '../law/danish-law.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { chooseChannel } from './choose-reminder-channel.ts';
import { initialReminderDelivery } from './reminder-delivery-lifecycle.ts';
import { initialReminderStatus, REMINDER_LIFECYCLE } from './reminder-lifecycle.ts';
import { recordReminderEvent } from './record-reminder-event.ts';
import { stepInstant, type DunningContext } from './dunning-context.ts';
import type { Rule } from '../law/danish-law.ts';
import { postInterest } from '../interest/post-interest.ts';
import { arrearsStart, compensationDue, decideFee, feeRule, type OverdueInterval, PLAN_RULES, planReminderCount, stepRule } from './reminder-policy.ts';

/**
 * The reminders sent to the invoice's customer since their continuous arrears containing `on` began: those with a fee
 * (the three-fee cap per arrears) and all of them (the compensation comes with the arrears' first step).
 */
async function arrearsReminders(sql: Queryable, ctx: DunningContext, on: string): Promise<{ feeBearing: number; all: number }> {
  const intervals = await sql<OverdueInterval[]>`
    SELECT (due_date + 1)::text AS from, settled_on::text AS until FROM invoices
    WHERE organization_id = ${ctx.organizationId} AND customer_id = ${ctx.invoice.customer_id} AND type = 'invoice'
      AND due_date IS NOT NULL AND due_date < ${on}::date AND status NOT IN ${INVOICE_LIFECYCLE.in(sql, UNISSUED_STATUSES)}`;
  const start = arrearsStart(intervals, on);
  if (start === null) return { feeBearing: 0, all: 0 };
  const [row] = await sql<{ fee_bearing: number; all: number }[]>`
    SELECT (count(*) FILTER (WHERE fee_oere > 0))::int AS fee_bearing, count(*)::int AS all FROM reminders
    WHERE organization_id = ${ctx.organizationId} AND customer_id = ${ctx.invoice.customer_id}
      AND sent_on >= ${start}::date AND sent_on <= ${on}::date`;
  return { feeBearing: row!.fee_bearing, all: row!.all };
}

export interface TakenStep {
  reminderId: string;
  type: 'payment_reminder' | 'reminder';
  reminderNumber: number | null;
  feeOere: number;
  channel: 'email' | 'letter' | null;
  status: 'sent' | 'failed';
  collectionsReady: boolean;
  /** The rule that decided the fee (charged or not), for the step's journaled result. */
  feeRule: Rule;
}

/**
 * Writes one reminder taken on `sentOn` (a planned date the clock has passed, or today), with the fee the law allows
 * on that date, by the channel the customer allows. `demandLetter` marks the plan's last reminder (the påkrav).
 *
 * In the caller's transaction with the invoice's row locked: the engine's automatic steps (take-due-dunning-step.ts)
 * and the ad-hoc `POST …/reminders` share this, so a manual and an automatic reminder racing for one invoice are
 * serialised on its row and numbered once (the unique indexes of `reminders` back it). One transaction writes the
 * reminder row, its fee (an invoice_fees row), the timeline entry, the invoice's move to `overdue` with
 * `invoice.overdue` on its first reminder of any kind, `collections_ready` after the plan's last reminder, and the
 * customer's past-due transition that the fee may cause, and `reminder.failed` for a reminder without a channel. The
 * document and its delivery follow after commit, as durable steps (the row's `delivery` is `pending` until then; its
 * outcome brings `reminder.sent` or `reminder.failed`).
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
  const arrears = await arrearsReminders(sql, ctx, step.sentOn);
  const decision =
    step.type === 'reminder' && channel.channel !== null
      ? decideFee({ effectiveFeeOere: rule.feeOere, dueDate: ctx.facts.dueDate, taken: ctx.facts.taken, arrearsFeeReminders: arrears.feeBearing }, step.sentOn)
      : null;
  const fee = decision?.feeOere ?? 0;
  const why = decision ? feeRule(decision) : step.type === 'payment_reminder' ? PLAN_RULES.paymentReminderFree : PLAN_RULES.undeliverable;
  const sentAt = stepInstant(ctx, step.sentOn);
  const id = uuidv7(sentAt.getTime());
  let feeId: string | null = null;
  if (fee > 0) {
    feeId = uuidv7();
    await sql`
      INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere)
      VALUES (${feeId}, ${org}, ${invoice.id}, ${invoice.customer_id}, 'reminder', ${fee})`;
  }
  // What the law adds to the claim at this step (docs/reminders.md, "Interest" and "Compensation"): the interest
  // accrued up to the step's date, and the 310 kr compensation on the first step of a business customer's arrears.
  const interest =
    ctx.settings.lateInterest === 'statutory'
      ? await postInterest(sql, { organizationId: org, invoiceId: invoice.id, customerId: invoice.customer_id, dueDate: ctx.facts.dueDate, grossOere: invoice.gross_oere, postedThrough: invoice.interest_posted_through }, step.sentOn, sentAt, id)
      : { totalOere: 0 };
  const compensation = compensationDue({ enabled: ctx.settings.compensation, customerType: ctx.customer.type, earlierStepsInArrears: arrears.all, dueDate: ctx.facts.dueDate, on: step.sentOn });
  if (compensation > 0) {
    await sql`
      INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere, reminder_id)
      VALUES (${uuidv7()}, ${org}, ${invoice.id}, ${invoice.customer_id}, 'compensation', ${compensation}, ${id})`;
    await recordTimeline(sql, org, invoice.id, 'compensation', { amountOere: compensation, reminderId: id }, sentAt);
  }
  const status = initialReminderStatus(channel.channel !== null);
  await sql`
    INSERT INTO reminders (id, organization_id, invoice_id, customer_id, type, reminder_number, fee_oere, fee_id, channel, status,
                           failure_code, demand_letter, source, sent_on, sent_at, deadline, delivery, logo_sha256, interest_oere, compensation_oere)
    VALUES (${id}, ${org}, ${invoice.id}, ${invoice.customer_id}, ${step.type}, ${step.reminderNumber}, ${fee}, ${feeId},
            ${channel.channel}, ${status}, ${channel.channel === null ? channel.failureCode : null}, ${step.demandLetter},
            ${step.source}, ${step.sentOn}::date, ${sentAt}, ${paakravDeadline(step.sentOn)}::date,
            ${initialReminderDelivery(channel.channel !== null)}, ${lightLogoNow(sql, org)}, ${interest.totalOere}, ${compensation})`;
  await recordTimeline(sql, org, invoice.id, 'reminder', {
    reminderId: id,
    type: step.type,
    reminderNumber: step.reminderNumber,
    feeOere: fee,
    channel: channel.channel,
    status,
  }, sentAt);
  // The first reminder of any kind makes the invoice overdue; later ones leave its status as it is.
  if (INVOICE_LIFECYCLE.can(invoice.status, 'remind')) {
    await transitionInvoice(sql, org, invoice.id, 'remind', { refused: () => new Error(`invoice ${invoice.id} is not issued`) });
    await recordEvent(sql, {
      organizationId: org,
      type: 'invoice.overdue',
      entityId: invoice.id,
      data: {
        invoiceId: invoice.id,
        number: invoice.number!,
        dueDate: ctx.facts.dueDate,
        balanceOere: rowBalanceOere({ ...invoice, fees_oere: invoice.fees_oere + fee + interest.totalOere + compensation }),
        reminderId: id,
        externalReference: invoice.external_reference,
      },
    });
  }
  // A reminder without a channel failed as it was taken: its event now (one with a channel reports when delivered).
  if (status === REMINDER_LIFECYCLE.transitions.fail.to) await recordReminderEvent(sql, id, 'failed');
  const collectionsReady = step.type === 'reminder' && step.reminderNumber !== null && step.reminderNumber >= planReminderCount(ctx.plan);
  if (collectionsReady) {
    const [marked] = await sql`
      UPDATE invoices SET collections_ready = true, updated_at = now()
      WHERE organization_id = ${org} AND id = ${invoice.id} AND NOT collections_ready RETURNING 1`;
    if (marked) await recordTimeline(sql, org, invoice.id, 'collections_ready', { reminderId: id }, sentAt);
  }
  // A fee moves what the customer owes overdue: announce a past-due transition it causes, in this transaction.
  if (fee + interest.totalOere + compensation > 0) await reconcilePastDue(sql, org, ctx.today, [invoice.customer_id]);
  return { reminderId: id, type: step.type, reminderNumber: step.reminderNumber, feeOere: fee, channel: channel.channel, status, collectionsReady, feeRule: why };
}
