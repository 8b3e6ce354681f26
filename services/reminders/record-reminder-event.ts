import type { ReminderEventData } from '../../contracts/event-catalogue.ts';
import { recordEvent } from '../events/record-event.ts';
import type { Queryable } from '../shared/db.ts';
import { reminderCharges } from './reminder-charges.ts';

interface ReminderRow {
  organization_id: string;
  invoice_id: string;
  customer_id: string;
  type: 'payment_reminder' | 'reminder';
  reminder_number: number | null;
  fee_oere: number;
  interest_oere: number;
  compensation_oere: number;
  demand_letter: boolean;
  channel: 'email' | 'letter' | null;
  deadline: string;
  failure_code: string | null;
}

/**
 * Records a reminder's outcome as its event, in the caller's transaction: `reminder.sent` once its delivery succeeded,
 * `reminder.failed` once it is recorded as failed (no channel when its step was taken, or its delivery refused or given
 * up). The caller writes that outcome in the same transaction through a guarded transition and calls this only when
 * the transition happened, so a step repeated after a crash records nothing twice; it holds the invoice's row lock,
 * since the event counts in the invoice's sekvensnummer (the `invoice` block). Reads the reminder as written.
 */
export async function recordReminderEvent(sql: Queryable, reminderId: string, outcome: 'sent' | 'failed'): Promise<void> {
  const [r] = await sql<ReminderRow[]>`
    SELECT organization_id, invoice_id, customer_id, type, reminder_number, fee_oere, interest_oere::float8 AS interest_oere, compensation_oere::float8 AS compensation_oere, demand_letter, channel, deadline::text AS deadline, failure_code
    FROM reminders WHERE id = ${reminderId}`;
  if (!r) throw new Error(`reminder ${reminderId} does not exist`);
  const data: ReminderEventData = {
    reminderId,
    invoiceId: r.invoice_id,
    customerId: r.customer_id,
    type: r.type,
    reminderNumber: r.reminder_number,
    ...reminderCharges(r),
    demandLetter: r.demand_letter,
    channel: r.channel,
    deadline: r.deadline,
  };
  if (outcome === 'sent') {
    await recordEvent(sql, { organizationId: r.organization_id, type: 'reminder.sent', entityId: r.invoice_id, data });
  } else {
    if (r.failure_code === null) throw new Error(`reminder ${reminderId} is recorded as failed without a failure code`);
    await recordEvent(sql, { organizationId: r.organization_id, type: 'reminder.failed', entityId: r.invoice_id, data: { ...data, failureCode: r.failure_code } });
  }
}

/**
 * Locks the reminder's invoice row (as the step that took the reminder held it) before its delivery's outcome is
 * written with its event: the invoice's events are numbered under that lock. Answers the reminder's organisation and
 * invoice, or undefined for no such reminder.
 */
export async function lockReminderInvoice(sql: Queryable, reminderId: string): Promise<{ organizationId: string; invoiceId: string } | undefined> {
  const [r] = await sql<{ organization_id: string; invoice_id: string }[]>`SELECT organization_id, invoice_id FROM reminders WHERE id = ${reminderId}`;
  if (!r) return undefined;
  await sql`SELECT 1 FROM invoices WHERE organization_id = ${r.organization_id} AND id = ${r.invoice_id} FOR UPDATE`;
  return { organizationId: r.organization_id, invoiceId: r.invoice_id };
}
