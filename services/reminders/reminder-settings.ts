import { STATUTORY_FEE_OERE } from '../law/danish-law.ts';
import type { Queryable } from '../shared/db.ts';

/**
 * An organisation's reminder settings (docs/api-conventions.md, "Reminder settings"): what the API shows
 * and takes, and what the dunning engine plans with. Every step not yet taken follows the settings as they are when
 * it is planned.
 */
export interface ReminderSettings {
  maxReminders: number;
  feeOere: number | null;
  cadence: { reminderNumber: number; daysAfterDue: number }[];
  autoCollections: boolean;
  paymentReminderEnabled: boolean;
  paymentReminderDays: number;
  letterFallback: boolean;
  /** Late-payment interest (renteloven §§ 3 and 5): `statutory` posts it at each step, hand-over and settlement. */
  lateInterest: 'none' | 'statutory';
  /** The 310 kr compensation (renteloven § 9 a, stk. 3) for company customers, once per continuous arrears. */
  compensation: boolean;
}

/** An organisation without a row in reminder_settings has these (frozen: take a copy to change one). */
export const DEFAULT_REMINDER_SETTINGS: ReminderSettings = Object.freeze({
  maxReminders: 3,
  feeOere: null,
  cadence: Object.freeze([
    Object.freeze({ reminderNumber: 1, daysAfterDue: 7 }),
    Object.freeze({ reminderNumber: 2, daysAfterDue: 14 }),
    Object.freeze({ reminderNumber: 3, daysAfterDue: 21 }),
  ]) as ReminderSettings['cadence'],
  autoCollections: false,
  paymentReminderEnabled: false,
  paymentReminderDays: 3,
  letterFallback: false,
  lateInterest: 'none',
  compensation: false,
});

/** The fee a fee-bearing reminder carries: the organisation's own, or the statutory cap (a null `feeOere`). */
export const effectiveFee = (s: ReminderSettings): number => s.feeOere ?? STATUTORY_FEE_OERE;

interface ReminderSettingsRow {
  max_reminders: number;
  fee_oere: number | null;
  cadence_days: number[];
  auto_collections: boolean;
  payment_reminder_enabled: boolean;
  payment_reminder_days: number;
  letter_fallback: boolean;
  late_interest: 'none' | 'statutory';
  compensation: boolean;
}

/**
 * The organisation's settings, the defaults when it has set none. Always a fresh object the caller may change. In a
 * transaction it reads that transaction's snapshot (a PUT committed later is seen by the next read).
 */
export async function loadReminderSettings(sql: Queryable, organizationId: string): Promise<ReminderSettings> {
  const [row] = await sql<ReminderSettingsRow[]>`
    SELECT max_reminders, fee_oere, cadence_days, auto_collections, payment_reminder_enabled, payment_reminder_days,
           letter_fallback, late_interest, compensation
    FROM reminder_settings WHERE organization_id = ${organizationId}`;
  if (!row) {
    const d = DEFAULT_REMINDER_SETTINGS;
    return { ...d, cadence: d.cadence.map((step) => ({ ...step })) };
  }
  return {
    maxReminders: row.max_reminders,
    feeOere: row.fee_oere,
    // Stored as the days of reminders 1, 2 and 3, in that order.
    cadence: row.cadence_days.map((daysAfterDue, i) => ({ reminderNumber: i + 1, daysAfterDue })),
    autoCollections: row.auto_collections,
    paymentReminderEnabled: row.payment_reminder_enabled,
    paymentReminderDays: row.payment_reminder_days,
    letterFallback: row.letter_fallback,
    lateInterest: row.late_interest,
    compensation: row.compensation,
  };
}
