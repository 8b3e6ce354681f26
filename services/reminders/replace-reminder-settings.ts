import type { ReminderSettingsReplace, ReminderSettingsView } from '../../contracts/reminders.ts';
import type { Tx } from '../shared/db.ts';
import { DomainError, type ErrorDetail } from '../shared/errors.ts';
import { reminderSettingsView } from './get-reminder-settings.ts';
import type { ReminderSettings } from './reminder-settings.ts';

/**
 * The rules of a settings body that its schema cannot state: the three cadence steps are reminders 1, 2 and 3 in that
 * order, and their days strictly increase. Like a schema violation they are 400 `validation_failed`, one detail per
 * offending place (`/cadence/1/reminderNumber`, `/cadence/2/daysAfterDue`). Expects a body the schema accepted.
 */
export function assertCadenceValid(body: ReminderSettingsReplace): void {
  const details: ErrorDetail[] = [];
  body.cadence.forEach((step, i) => {
    if (step.reminderNumber !== i + 1) {
      details.push({ path: `/cadence/${i}/reminderNumber`, message: `must be ${i + 1} (reminders 1, 2, 3 in that order)` });
    }
    const previous = body.cadence[i - 1];
    if (previous && step.daysAfterDue <= previous.daysAfterDue) {
      details.push({
        path: `/cadence/${i}/daysAfterDue`,
        message: `must be greater than the previous step's daysAfterDue (${previous.daysAfterDue})`,
      });
    }
  });
  const first = details[0];
  if (first) throw new DomainError('validation_failed', `${first.path} ${first.message}.`, { details });
}

/**
 * PUT /v1/reminder-settings: replaces all seven settings in one statement (an upsert on the organisation), inside the
 * request's transaction, which also stores the idempotent response. New settings apply to every reminder step not yet
 * taken; steps taken stay as they were.
 *
 * Checked here, after the schema: the cadence rules above (400), then that an enabled payment reminder comes before
 * the first reminder (422 `invalid_reminder_settings`). The database's checks say the same; they are the backstop.
 */
export async function replaceReminderSettings(tx: Tx, organizationId: string, body: ReminderSettingsReplace): Promise<ReminderSettingsView> {
  assertCadenceValid(body);
  const firstDay = body.cadence[0]!.daysAfterDue;
  if (body.paymentReminderEnabled && body.paymentReminderDays >= firstDay) {
    throw new DomainError(
      'invalid_reminder_settings',
      `The payment reminder must come before the first reminder: paymentReminderDays must be less than ${firstDay}.`,
      { details: [{ path: '/paymentReminderDays', message: `must be less than the first cadence step's daysAfterDue (${firstDay}) when paymentReminderEnabled is true` }] },
    );
  }
  const settings: ReminderSettings = {
    maxReminders: body.maxReminders,
    feeOere: body.feeOere,
    cadence: body.cadence.map((step) => ({ reminderNumber: step.reminderNumber, daysAfterDue: step.daysAfterDue })),
    autoCollections: body.autoCollections,
    paymentReminderEnabled: body.paymentReminderEnabled,
    paymentReminderDays: body.paymentReminderDays,
    letterFallback: body.letterFallback,
    lateInterest: body.lateInterest ?? 'none',
    compensation: body.compensation ?? false,
  };
  const days = settings.cadence.map((step) => step.daysAfterDue);
  await tx`
    INSERT INTO reminder_settings (organization_id, max_reminders, fee_oere, cadence_days, auto_collections,
                                   payment_reminder_enabled, payment_reminder_days, letter_fallback, late_interest, compensation, updated_at)
    VALUES (${organizationId}, ${settings.maxReminders}, ${settings.feeOere}, ${days}::integer[], ${settings.autoCollections},
            ${settings.paymentReminderEnabled}, ${settings.paymentReminderDays}, ${settings.letterFallback}, ${settings.lateInterest}, ${settings.compensation}, now())
    ON CONFLICT (organization_id) DO UPDATE SET
      max_reminders = EXCLUDED.max_reminders,
      fee_oere = EXCLUDED.fee_oere,
      cadence_days = EXCLUDED.cadence_days,
      auto_collections = EXCLUDED.auto_collections,
      payment_reminder_enabled = EXCLUDED.payment_reminder_enabled,
      payment_reminder_days = EXCLUDED.payment_reminder_days,
      letter_fallback = EXCLUDED.letter_fallback,
      late_interest = EXCLUDED.late_interest,
      compensation = EXCLUDED.compensation,
      updated_at = now()`;
  // What was written is exactly the body: the answer is the body with the fee it means.
  return reminderSettingsView(settings);
}
