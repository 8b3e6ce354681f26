import { collectInvoice } from '../cases/collect-invoice.ts';
import type { Db, Queryable } from '../shared/db.ts';
import { INVOICE_LIFECYCLE, REMINDABLE_STATUSES } from '../invoices/invoice-lifecycle.ts';
import { nextStep } from './reminder-policy.ts';
import { PENDING_DELIVERY, REMINDER_DELIVERY_LIFECYCLE } from './reminder-delivery-lifecycle.ts';
import { loadDunningContext, type DunningContext } from './dunning-context.ts';
import { lockCustomerDunning } from './lock-customer-dunning.ts';
import { noteLimitationWarning } from './note-limitation-warning.ts';
import { scheduleDunning } from './schedule-dunning.ts';
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
 */
export type DunningStep =
  | { kind: 'done' }
  | { kind: 'wait'; date: string }
  | { kind: 'noted'; daysBefore: number; date: string }
  | { kind: 'deliver'; reminderId: string; delivery: 'pending' | 'none'; documented: boolean; taken?: TakenStep }
  /** A step of another invoice of the customer, dated earlier, was taken first: that invoice's lifecycle delivers it. */
  | { kind: 'sibling'; invoiceId: string }
  /** autoCollections: the invoice was collected (as POST …/collect); the case's own lifecycle takes over. */
  | { kind: 'collected'; caseId: string };

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
    const step = nextStep(ctx.facts, ctx.plan);
    if (step === null) {
      await scheduleDunning(tx, organizationId, invoiceId, null);
      return { step: { kind: 'done' } };
    }
    if (step.date > ctx.today) {
      await scheduleDunning(tx, organizationId, invoiceId, step.date);
      return { step: { kind: 'wait', date: step.date } };
    }
    if (step.kind === 'limitation_warning') {
      await noteLimitationWarning(tx, ctx, step.daysBefore, step.date);
      return { step: { kind: 'noted', daysBefore: step.daysBefore, date: step.date }, taken: 'limitation_warning' };
    }
    if (step.kind === 'collect') {
      // The same use case as POST …/collect (its checks, the case, the invoice's hand-over, the end of this lifecycle).
      const { view } = await collectInvoice(tx, organizationId, invoiceId, new Date());
      return { step: { kind: 'collected', caseId: view.id }, taken: 'collect' };
    }
    // ... and in the order of their dates: a catch-up that passed steps of several of the customer's invoices takes
    // an earlier-dated step of another invoice first, so each fee decision sees what was sent before its date.
    const earlier = await earlierSiblingStep(tx, ctx, step.date);
    if (earlier) {
      await takeReminder(tx, earlier.ctx, { ...earlier.step, source: 'automatic' });
      await scheduleDunning(tx, organizationId, earlier.ctx.invoice.id, ctx.today);
      return { step: { kind: 'sibling', invoiceId: earlier.ctx.invoice.id }, taken: reminderKind(earlier.step.type, earlier.step.demandLetter) };
    }
    const taken = await takeReminder(tx, ctx, {
      type: step.kind,
      reminderNumber: step.kind === 'reminder' ? step.reminderNumber : null,
      sentOn: step.date,
      demandLetter: step.kind === 'reminder' && step.demandLetter,
      source: 'automatic',
    });
    return {
      step: { kind: 'deliver', reminderId: taken.reminderId, delivery: taken.channel === null ? 'none' : 'pending', documented: false, taken },
      taken: reminderKind(step.kind, step.kind === 'reminder' && step.demandLetter),
    };
  });
}

/**
 * The earliest reminder step, dated before `before` and due by the business today, of the customer's other open
 * invoices (ties: the lower invoice id), with that invoice locked; undefined when there is none.
 */
async function earlierSiblingStep(
  tx: Queryable,
  ctx: DunningContext,
  before: string,
): Promise<{ ctx: DunningContext; step: { type: 'payment_reminder' | 'reminder'; reminderNumber: number | null; sentOn: string; demandLetter: boolean } } | undefined> {
  const siblings = await tx<{ id: string }[]>`
    SELECT id FROM invoices
    WHERE organization_id = ${ctx.organizationId} AND customer_id = ${ctx.invoice.customer_id} AND id <> ${ctx.invoice.id}
      AND type = 'invoice' AND status IN ${INVOICE_LIFECYCLE.in(tx, REMINDABLE_STATUSES)} AND due_date < ${before}::date
    ORDER BY id`;
  let best: { id: string; date: string } | undefined;
  for (const { id } of siblings) {
    const other = await loadDunningContext(tx, ctx.organizationId, id, { lock: false });
    if (!other) continue;
    const step = nextStep(other.facts, other.plan);
    if (!step || step.kind === 'limitation_warning' || step.kind === 'collect' || step.date >= before || step.date > ctx.today) continue;
    if (!best || step.date < best.date) best = { id, date: step.date };
  }
  if (!best) return undefined;
  const locked = await loadDunningContext(tx, ctx.organizationId, best.id);
  const step = locked && nextStep(locked.facts, locked.plan);
  if (!locked || !step || step.kind === 'limitation_warning' || step.kind === 'collect' || step.date >= before) return undefined;
  return {
    ctx: locked,
    step: { type: step.kind, reminderNumber: step.kind === 'reminder' ? step.reminderNumber : null, sentOn: step.date, demandLetter: step.kind === 'reminder' && step.demandLetter },
  };
}

/** The oldest reminder of the invoice whose document or delivery is still to do. */
async function unfinishedReminder(sql: Queryable, organizationId: string, invoiceId: string): Promise<{ id: string; delivery: 'pending' | 'none'; documented: boolean } | undefined> {
  const [row] = await sql<{ id: string; delivery: 'pending' | 'none'; documented: boolean }[]>`
    SELECT id, delivery, document_sha256 IS NOT NULL AS documented FROM reminders
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND (delivery IN ${REMINDER_DELIVERY_LIFECYCLE.in(sql, [PENDING_DELIVERY])} OR document_sha256 IS NULL)
    ORDER BY sent_on, id LIMIT 1`;
  return row;
}
