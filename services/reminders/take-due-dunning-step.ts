import type { Db } from '../shared/db.ts';
import { nextStep } from './reminder-policy.ts';
import { loadDunningContext, noteLimitationWarning, scheduleDunning, takeReminder, unfinishedReminder, type TakenStep } from './take-reminder-step.ts';

/**
 * One step of an invoice's dunning lifecycle, for the Dunning workflow (workflows/dunning.ts), in one transaction
 * with the invoice's row locked:
 *
 * - a reminder taken earlier whose document or delivery is unfinished comes first (a crash after its commit): it is
 *   handed back to be rendered and delivered, never taken again;
 * - otherwise the plan's next step, if its day has come (the business today, or a day a clock advance passed): a
 *   reminder is taken on its own planned date, a limitation warning noted;
 * - otherwise the lifecycle waits for the next step's day (the wake index row moves there) or ends (the row goes).
 *
 * Safe to repeat: everything it does is read back from the database the next time.
 */
export type DunningStep =
  | { kind: 'done' }
  | { kind: 'wait'; date: string }
  | { kind: 'noted'; daysBefore: number; date: string }
  | { kind: 'deliver'; reminderId: string; delivery: 'pending' | 'none'; documented: boolean; taken?: TakenStep };

export async function takeDueDunningStep(db: Db, organizationId: string, invoiceId: string): Promise<DunningStep> {
  return db.tx(async (tx) => {
    const ctx = await loadDunningContext(tx, organizationId, invoiceId);
    if (!ctx) {
      await scheduleDunning(tx, organizationId, invoiceId, null);
      return { kind: 'done' };
    }
    const unfinished = await unfinishedReminder(tx, organizationId, invoiceId);
    if (unfinished) return { kind: 'deliver', reminderId: unfinished.id, delivery: unfinished.delivery, documented: unfinished.documented };
    const step = nextStep(ctx.facts, ctx.settings);
    if (step === null) {
      await scheduleDunning(tx, organizationId, invoiceId, null);
      return { kind: 'done' };
    }
    if (step.date > ctx.today) {
      await scheduleDunning(tx, organizationId, invoiceId, step.date);
      return { kind: 'wait', date: step.date };
    }
    if (step.kind === 'limitation_warning') {
      await noteLimitationWarning(tx, ctx, step.daysBefore, step.date);
      return { kind: 'noted', daysBefore: step.daysBefore, date: step.date };
    }
    const taken = await takeReminder(tx, ctx, {
      type: step.kind,
      reminderNumber: step.kind === 'reminder' ? step.reminderNumber : null,
      sentOn: step.date,
      demandLetter: step.kind === 'reminder' && step.demandLetter,
      source: 'automatic',
    });
    return { kind: 'deliver', reminderId: taken.reminderId, delivery: taken.channel === null ? 'none' : 'pending', documented: false, taken };
  });
}
