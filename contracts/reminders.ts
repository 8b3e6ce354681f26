import { Type, type Static } from 'typebox';
import { Nullable } from './common.ts';

/**
 * Reminder settings (docs/api-conventions.md, "Reminder settings"). The schema checks types and bounds; the rules
 * across items (reminder numbers 1, 2, 3 in that order, days strictly increasing) are checked after it, with the same
 * 400 `validation_failed` and a pointer at the offending item (services/reminders/replace-reminder-settings.ts).
 */
export const ReminderCadenceStep = Type.Object(
  {
    reminderNumber: Type.Integer({ minimum: 1, maximum: 3, description: 'Which reminder: 1, 2, 3, in that order' }),
    daysAfterDue: Type.Integer({
      minimum: 1,
      maximum: 365,
      description: 'Days after the due date; strictly increasing from reminder to reminder',
    }),
  },
  { additionalProperties: false, title: 'ReminderCadenceStep' },
);
export type ReminderCadenceStep = Static<typeof ReminderCadenceStep>;

const settingsFields = {
  maxReminders: Type.Integer({ minimum: 0, maximum: 3, description: 'Fee-bearing reminders in the plan, 0..3' }),
  feeOere: Nullable(
    Type.Integer({
      minimum: 0,
      maximum: 10000,
      description: 'Fee per reminder in øre, 0..10000; null means the statutory cap (currently 10000 øre)',
    }),
  ),
  cadence: Type.Array(ReminderCadenceStep, {
    minItems: 3,
    maxItems: 3,
    description: 'Exactly three steps, reminderNumber 1, 2, 3 in that order, daysAfterDue strictly increasing',
  }),
  autoCollections: Type.Boolean({ description: 'Hand over to debt collection automatically after the last reminder' }),
  paymentReminderEnabled: Type.Boolean({ description: 'A free-of-charge payment reminder before the fee-bearing ones' }),
  paymentReminderDays: Type.Integer({
    minimum: 1,
    maximum: 365,
    description: 'Days after the due date of the payment reminder; when enabled, fewer than the first cadence step’s',
  }),
  letterFallback: Type.Boolean({ description: 'A physical letter when the customer has no e-mail address' }),
  lateInterest: Type.Optional(
    Type.Union([Type.Literal('none'), Type.Literal('statutory')], {
      description: 'Late-payment interest (renteloven §§ 3 and 5): `statutory` accrues the reference rate + 8 percentage points and posts it at each reminder step, hand-over and settlement. Absent: `none`',
    }),
  ),
  compensation: Type.Optional(
    Type.Boolean({ description: 'The 310 kr compensation (renteloven § 9 a, stk. 3) on company customers, once per continuous arrears. Absent: false' }),
  ),
};

export const ReminderSettingsReplace = Type.Object(settingsFields, {
  additionalProperties: false,
  title: 'ReminderSettingsReplace',
  description:
    'Full replacement: the seven plan fields, and `lateInterest` and `compensation` (absent: `none` and false), no others. paymentReminderEnabled with paymentReminderDays not before the ' +
    'first cadence step is 422 invalid_reminder_settings.',
});
export type ReminderSettingsReplace = Static<typeof ReminderSettingsReplace>;

export const ReminderSettingsView = Type.Object(
  {
    maxReminders: Type.Integer(),
    feeOere: Nullable(Type.Integer()),
    effectiveFeeOere: Type.Integer({ description: 'The fee a reminder carries: feeOere, or the statutory cap when it is null' }),
    cadence: Type.Array(ReminderCadenceStep),
    autoCollections: Type.Boolean(),
    paymentReminderEnabled: Type.Boolean(),
    paymentReminderDays: Type.Integer(),
    letterFallback: Type.Boolean(),
    lateInterest: Type.Union([Type.Literal('none'), Type.Literal('statutory')]),
    compensation: Type.Boolean(),
  },
  { title: 'ReminderSettings', description: 'The organisation’s reminder settings, defaults filled in' },
);
export type ReminderSettingsView = Static<typeof ReminderSettingsView>;
