import type { ReminderSettingsView } from '../../contracts/reminders.ts';
import type { Queryable } from '../shared/db.ts';
import { effectiveFee, loadReminderSettings, type ReminderSettings } from './reminder-settings.ts';

/** The settings as the API shows them: the nine fields with the fee a reminder actually carries beside them. */
export function reminderSettingsView(s: ReminderSettings): ReminderSettingsView {
  return {
    maxReminders: s.maxReminders,
    feeOere: s.feeOere,
    effectiveFeeOere: effectiveFee(s),
    cadence: s.cadence.map((step) => ({ reminderNumber: step.reminderNumber, daysAfterDue: step.daysAfterDue })),
    autoCollections: s.autoCollections,
    paymentReminderEnabled: s.paymentReminderEnabled,
    paymentReminderDays: s.paymentReminderDays,
    letterFallback: s.letterFallback,
    lateInterest: s.lateInterest,
    compensation: s.compensation,
  };
}

/** GET /v1/reminder-settings: the organisation's settings, defaults filled in when it has set none. */
export async function getReminderSettings(sql: Queryable, organizationId: string): Promise<ReminderSettingsView> {
  return reminderSettingsView(await loadReminderSettings(sql, organizationId));
}
