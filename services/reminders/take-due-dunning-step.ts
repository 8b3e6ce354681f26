import { collectInvoice } from '../cases/collect-invoice.ts';
import type { Db, Queryable } from '../shared/db.ts';
import { citeRules, type Rule, type StepRule } from '../law/danish-law.ts';
import { INVOICE_LIFECYCLE, REMINDABLE_STATUSES } from '../invoices/invoice-lifecycle.ts';
import { decideStep } from './reminder-policy.ts';
import { PENDING_DELIVERY, REMINDER_DELIVERY_LIFECYCLE } from './reminder-delivery-lifecycle.ts';
import { loadDunningContext, stepInstant, type DunningContext } from './dunning-context.ts';
import { breakPaymentPlan } from '../payment-plans/break-payment-plan.ts';
import { lockCustomerDunning } from './lock-customer-dunning.ts';
import { noteLimitationWarning } from './note-limitation-warning.ts';
import { scheduleDunning } from './schedule-dunning.ts';
import { compareSteps, firstInOrder, type OrderedStep } from './step-order.ts';
import { takeReminder, type TakenStep } from './take-reminder.ts';
import { recordReminderStep, type ReminderStepKind } from '../observability/metrics.ts';

/**
 * One step of an invoice's dunning lifecycle, for the Dunning workflow (workflows/dunning.ts), in one transaction
 * with the invoice's row locked:
 *
 * - a reminder taken earlier whose document or delivery is unfinished comes first (a crash after its commit): it is
 *   handed back to be rendered and delivered, never taken again;
 * - otherwise the plan's next step, if its day has come (the business today, or a day a clock advance passed): a
 *   reminder is taken on its own planned date, a limitation warning noted, the collect step (the plan's collections) taken
 *   by the collect use case (services/cases/collect-invoice.ts), which ends this lifecycle;
 * - otherwise the lifecycle waits for the next step's day (the wake index row moves there) or ends (the row goes).
 *
 * Safe to repeat: everything it does is read back from the database the next time.
 *
 * Each step taken (and each wait) names the rules that decided its date and fee (`rule`, a `StepRule` of
 * danish-law.ts, from reminder-policy.ts's `decideStep` and `feeRule`), so the step's journaled result in the Restate
 * UI says why. A reminder handed back after a crash was decided by the earlier attempt and carries none, and results
 * journaled before `rule` existed lack it: optional.
 */
export type DunningStep =
  | { kind: 'done' }
  | { kind: 'wait'; date: string; rule?: StepRule }
  | { kind: 'noted'; daysBefore: number; date: string; rule?: StepRule }
  /** The invoice's active payment plan broke on `date` (an instalment unpaid 10 days after its due date); dunning resumes. */
  | { kind: 'plan_broken'; paymentPlanId: string; date: string; rule?: StepRule }
  | { kind: 'deliver'; reminderId: string; delivery: 'pending' | 'none'; documented: boolean; taken?: Omit<TakenStep, 'feeRule'>; rule?: StepRule }
  /**
   * A step of another invoice of the customer that comes first (an earlier date, or on the same date an older due date
   * or a lower invoice number: step-order.ts) was taken first: that invoice's lifecycle delivers it.
   */
  | { kind: 'sibling'; invoiceId: string; rule?: StepRule }
  /** autoCollections: the invoice was collected (as POST …/collect); the case's own lifecycle takes over. */
  | { kind: 'collected'; caseId: string; rule?: StepRule };

export async function takeDueDunningStep(db: Db, organizationId: string, invoiceId: string): Promise<DunningStep> {
  const { step, taken } = await takeInTransaction(db, organizationId, invoiceId);
  // Counted once committed: a step that rolled back was not taken.
  if (taken) recordReminderStep(taken);
  return step;
}

/** A reminder's kind as the metrics count it: the demand letter apart from the other reminders. */
const reminderKind = (type: 'payment_reminder' | 'reminder', demandLetter: boolean): ReminderStepKind =>
  type === 'payment_reminder' ? 'payment_reminder' : demandLetter ? 'demand_letter' : 'reminder';

async function takeInTransaction(db: Db, organizationId: string, invoiceId: string): Promise<{ step: DunningStep; taken?: ReminderStepKind }> {
  return db.tx(async (tx): Promise<{ step: DunningStep; taken?: ReminderStepKind }> => {
    // One customer's reminders are taken one at a time (their fees count together in the continuous arrears).
    await lockCustomerDunning(tx, organizationId, invoiceId);
    const ctx = await loadDunningContext(tx, organizationId, invoiceId);
    if (!ctx) {
      await scheduleDunning(tx, organizationId, invoiceId, null);
      return { step: { kind: 'done' } };
    }
    const unfinished = await unfinishedReminder(tx, organizationId, invoiceId);
    if (unfinished) return { step: { kind: 'deliver', reminderId: unfinished.id, delivery: unfinished.delivery, documented: unfinished.documented } };
    const decided = decideStep(ctx.facts, ctx.plan);
    if (decided === null) {
      await scheduleDunning(tx, organizationId, invoiceId, null);
      return { step: { kind: 'done' } };
    }
    const { step, dateRule } = decided;
    if (step.date > ctx.today) {
      await scheduleDunning(tx, organizationId, invoiceId, step.date);
      return { step: { kind: 'wait', date: step.date, rule: citeRules(dateRule, null) } };
    }
    if (step.kind === 'break_plan') {
      const plan = ctx.paymentPlan!;
      await breakPaymentPlan(tx, organizationId, plan, step.date, stepInstant(ctx, step.date));
      return { step: { kind: 'plan_broken', paymentPlanId: plan.id, date: step.date, rule: citeRules(dateRule, null) } };
    }
    if (step.kind === 'limitation_warning') {
      await noteLimitationWarning(tx, ctx, step.daysBefore, step.date);
      return { step: { kind: 'noted', daysBefore: step.daysBefore, date: step.date, rule: citeRules(dateRule, null) }, taken: 'limitation_warning' };
    }
    if (step.kind === 'collect') {
      // The same use case as POST …/collect (its checks, the case, the invoice's hand-over, the end of this lifecycle).
      const { view } = await collectInvoice(tx, organizationId, invoiceId, new Date());
      return { step: { kind: 'collected', caseId: view.id, rule: citeRules(dateRule, null) }, taken: 'collect' };
    }
    // ... and in a fixed order (step-order.ts): by date, then on one date the oldest due date, then the lowest
    // invoice number. A step of another invoice of the customer that comes before this one is taken first, here, so
    // each fee decision sees exactly the steps before it in that order, however the invoices' lifecycles woke.
    const first = await siblingStepFirst(tx, ctx, step.date);
    if (first) {
      const sibling = await takeReminder(tx, first.ctx, { ...first.step, source: 'automatic' });
      await scheduleDunning(tx, organizationId, first.ctx.invoice.id, ctx.today);
      return {
        step: { kind: 'sibling', invoiceId: first.ctx.invoice.id, rule: citeRules(first.dateRule, sibling.feeRule) },
        taken: reminderKind(first.step.type, first.step.demandLetter),
      };
    }
    const { feeRule, ...taken } = await takeReminder(tx, ctx, {
      type: step.kind,
      reminderNumber: step.kind === 'reminder' ? step.reminderNumber : null,
      sentOn: step.date,
      demandLetter: step.kind === 'reminder' && step.demandLetter,
      source: 'automatic',
    });
    return {
      step: { kind: 'deliver', reminderId: taken.reminderId, delivery: taken.channel === null ? 'none' : 'pending', documented: false, taken, rule: citeRules(dateRule, feeRule) },
      taken: reminderKind(step.kind, step.kind === 'reminder' && step.demandLetter),
    };
  });
}

type SiblingStep = { type: 'payment_reminder' | 'reminder'; reminderNumber: number | null; sentOn: string; demandLetter: boolean };

/** The invoice's reminder step due by the business today, in the order's terms (undefined for none). */
function dueReminderStep(ctx: DunningContext): { order: OrderedStep; dateRule: Rule; step: SiblingStep } | undefined {
  const decided = decideStep(ctx.facts, ctx.plan);
  const step = decided?.step;
  if (!decided || !step || step.kind === 'limitation_warning' || step.kind === 'collect' || step.kind === 'break_plan' || step.date > ctx.today) return undefined;
  return {
    order: { date: step.date, dueDate: ctx.facts.dueDate, number: ctx.invoice.number ?? Number.MAX_SAFE_INTEGER, invoiceId: ctx.invoice.id },
    dateRule: decided.dateRule,
    step: { type: step.kind, reminderNumber: step.kind === 'reminder' ? step.reminderNumber : null, sentOn: step.date, demandLetter: step.kind === 'reminder' && step.demandLetter },
  };
}

/**
 * The reminder step, due by the business today, of another open invoice of the customer that comes before this
 * invoice's step dated `on` (step-order.ts: an earlier date, or on the same date an older due date or a lower
 * number), the first of them in that order, with its invoice locked; undefined when this invoice's step comes first.
 * Under the customer's lock: the siblings' steps cannot change while they are read.
 */
async function siblingStepFirst(tx: Queryable, ctx: DunningContext, on: string): Promise<{ ctx: DunningContext; dateRule: Rule; step: SiblingStep } | undefined> {
  const own: OrderedStep = { date: on, dueDate: ctx.facts.dueDate, number: ctx.invoice.number ?? Number.MAX_SAFE_INTEGER, invoiceId: ctx.invoice.id };
  // A step comes after its invoice's due date, so only invoices due before `on` can have one on or before it.
  const siblings = await tx<{ id: string }[]>`
    SELECT id FROM invoices
    WHERE organization_id = ${ctx.organizationId} AND customer_id = ${ctx.invoice.customer_id} AND id <> ${ctx.invoice.id}
      AND type = 'invoice' AND status IN ${INVOICE_LIFECYCLE.in(tx, REMINDABLE_STATUSES)} AND due_date <= ${on}::date
    ORDER BY id`;
  const before: OrderedStep[] = [];
  for (const { id } of siblings) {
    const other = await loadDunningContext(tx, ctx.organizationId, id, { lock: false });
    const due = other && dueReminderStep(other);
    if (due && compareSteps(due.order, own) < 0) before.push(due.order);
  }
  const first = firstInOrder(before);
  if (!first) return undefined;
  // Locked and read again: what the step is taken from.
  const locked = await loadDunningContext(tx, ctx.organizationId, first.invoiceId);
  const due = locked && dueReminderStep(locked);
  if (!locked || !due || compareSteps(due.order, own) >= 0) return undefined;
  return { ctx: locked, dateRule: due.dateRule, step: due.step };
}

/** The oldest reminder of the invoice whose document or delivery is still to do. */
async function unfinishedReminder(sql: Queryable, organizationId: string, invoiceId: string): Promise<{ id: string; delivery: 'pending' | 'none'; documented: boolean } | undefined> {
  const [row] = await sql<{ id: string; delivery: 'pending' | 'none'; documented: boolean }[]>`
    SELECT id, delivery, document_sha256 IS NOT NULL AS documented FROM reminders
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND (delivery IN ${REMINDER_DELIVERY_LIFECYCLE.in(sql, [PENDING_DELIVERY])} OR document_sha256 IS NULL)
    ORDER BY sent_on, id LIMIT 1`;
  return row;
}
