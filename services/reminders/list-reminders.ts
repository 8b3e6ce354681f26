import { reminderCharges } from './reminder-charges.ts';
import type { ReminderHistoryItem } from '../../contracts/reminder-history.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { isIssued } from '../invoices/invoice-lifecycle.ts';
import { nextReminderStep, planReminderCount } from './reminder-policy.ts';
import { loadDunningContext } from './dunning-context.ts';

/**
 * `GET /v1/invoices/{id}/reminders`: the reminders taken on the invoice, oldest first, with the plan's number of
 * numbered reminders (the pinned flow's reminder steps for the customer's type, or the settings' maxReminders) and the engine's next planned reminder (the same rules that take it).
 */
export async function listReminders(
  sql: Queryable,
  organizationId: string,
  invoiceId: string,
): Promise<{ items: ReminderHistoryItem[]; maxReminders: number; nextReminder: { type: 'payment_reminder' | 'reminder'; reminderNumber: number | null; date: string } | null }> {
  // Read as the engine reads, without its lock, so `nextReminder` is exactly what the engine would plan now.
  const ctx = await loadDunningContext(sql, organizationId, invoiceId, { lock: false });
  // A credit note (readable at /v1/invoices/{id} too) has an empty history and nothing planned: it is never reminded.
  if (!ctx) throw notFound('invoice_not_found', 'invoice');
  if (!isIssued(ctx.invoice.status)) throw new DomainError('invoice_not_issued', 'A draft has no reminders; issue the invoice first.');
  const rows = await sql<
    {
      id: string;
      type: 'payment_reminder' | 'reminder';
      reminder_number: number | null;
      fee_oere: number;
      interest_oere: number;
      compensation_oere: number;
      channel: 'email' | 'letter' | null;
      status: 'sent' | 'failed';
      failure_code: string | null;
      demand_letter: boolean;
      deadline: string;
      source: 'automatic' | 'manual';
      sent_at: Date;
    }[]
  >`
    SELECT id, type, reminder_number, fee_oere, interest_oere::float8 AS interest_oere, compensation_oere::float8 AS compensation_oere, channel, status, failure_code, demand_letter, deadline::text AS deadline, source, sent_at
    FROM reminders WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}
    ORDER BY sent_on, id`;
  return {
    items: rows.map((r) => ({
      id: r.id,
      type: r.type,
      reminderNumber: r.reminder_number,
      ...reminderCharges(r),
      channel: r.channel,
      status: r.status,
      failureCode: r.failure_code,
      demandLetter: r.demand_letter,
      deadline: r.deadline,
      source: r.source,
      sentAt: r.sent_at.toISOString(),
    })),
    maxReminders: planReminderCount(ctx.plan),
    nextReminder: nextReminderStep(ctx.facts, ctx.plan),
  };
}
