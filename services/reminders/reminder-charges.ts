/**
 * What one reminder charges the debtor, as every report of it states it (the reminder events, contracts/event-catalogue.ts
 * ReminderEventData): its fee, and the late-payment interest and the fixed compensation it claims.
 *
 * Late-payment interest (Renteloven) and the fixed 310 kr. compensation between businesses are not charged yet: both
 * are 0 here, the one place that work fills in, so every report of a reminder follows it.
 */
export interface ReminderCharges {
  feeOere: number;
  interestOere: number;
  compensationOere: number;
}

export const reminderCharges = (reminder: { fee_oere: number }): ReminderCharges => ({
  feeOere: reminder.fee_oere,
  interestOere: 0,
  compensationOere: 0,
});
