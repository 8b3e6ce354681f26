import assert from 'node:assert/strict';
import { uuidv7 } from '../../services/shared/ids.ts';
import { call, testDb, type TestApp, type TestOrg } from './context.ts';

/**
 * Reminder rows as the dunning engine writes them, for the tests of what follows the step (document, mail, letter):
 * the invoice through the API, then the reminder (and its fee) by direct insert in one transaction.
 */

export interface IssuedInvoice {
  invoiceId: string;
  customerId: string;
  number: number;
}

export const ISSUE_DATE = '2025-11-17';
export const DUE_DATE = '2025-12-01';

/** A customer and one issued invoice of `grossOere` (VAT-exempt, so gross = net) due on DUE_DATE. */
export async function issueInvoice(t: TestApp, org: TestOrg, customer: Record<string, unknown>, grossOere: number): Promise<IssuedInvoice> {
  const c = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer });
  assert.equal(c.status, 201, c.raw);
  const line = { description: 'Konsulentydelse', quantity: 1, unitPriceOere: grossOere, vatRateBps: 0, vatExemptionReason: 'ML13' };
  const draft = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId: c.body.data.id, lines: [line] } });
  assert.equal(draft.status, 201, draft.raw);
  const issued = await call(t.app, 'POST', `/v1/invoices/${draft.body.data.id}/issue`, { key: org.apiKey, body: { issueDate: ISSUE_DATE, dueDate: DUE_DATE } });
  assert.equal(issued.status, 200, issued.raw);
  return { invoiceId: issued.body.data.id, customerId: c.body.data.id, number: issued.body.data.number };
}

export interface ReminderRow {
  type?: 'payment_reminder' | 'reminder';
  reminderNumber?: number | null;
  feeOere?: number;
  channel?: 'email' | 'letter' | null;
  failureCode?: string | null;
  demandLetter?: boolean;
  sentOn: string;
  deadline: string;
}

/** Inserts a reminder step as the engine takes it: the fee (if any) and the reminder in one transaction. */
export async function insertReminder(org: TestOrg, inv: IssuedInvoice, r: ReminderRow): Promise<string> {
  const id = uuidv7();
  const feeOere = r.feeOere ?? 0;
  const type = r.type ?? 'reminder';
  const failed = r.failureCode != null;
  await testDb().db.tx(async (tx) => {
    let feeId: string | null = null;
    if (feeOere > 0) {
      feeId = uuidv7();
      await tx`INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere)
               VALUES (${feeId}, ${org.organizationId}, ${inv.invoiceId}, ${inv.customerId}, 'reminder', ${feeOere})`;
    }
    await tx`
      INSERT INTO reminders (id, organization_id, invoice_id, customer_id, type, reminder_number, fee_oere, fee_id, channel, status,
                             failure_code, demand_letter, source, sent_on, sent_at, deadline, delivery)
      VALUES (${id}, ${org.organizationId}, ${inv.invoiceId}, ${inv.customerId}, ${type},
              ${type === 'payment_reminder' ? null : (r.reminderNumber ?? 1)}, ${feeOere}, ${feeId}, ${failed ? null : (r.channel ?? 'email')},
              ${failed ? 'failed' : 'sent'}, ${r.failureCode ?? null}, ${r.demandLetter ?? false}, 'automatic', ${r.sentOn}, now(),
              ${r.deadline}, ${failed ? 'none' : 'pending'})`;
  });
  return id;
}

/** A whole `PUT /v1/reminder-settings` body: the documented defaults, with `overrides`. */
export const reminderSettingsBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  maxReminders: 3,
  feeOere: null,
  cadence: [
    { reminderNumber: 1, daysAfterDue: 7 },
    { reminderNumber: 2, daysAfterDue: 14 },
    { reminderNumber: 3, daysAfterDue: 21 },
  ],
  autoCollections: false,
  paymentReminderEnabled: false,
  paymentReminderDays: 3,
  letterFallback: false,
  ...overrides,
});
