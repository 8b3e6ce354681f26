/**
 * What one reminder charges the debtor, as every report of it states it (the reminder events, contracts/event-catalogue.ts
 * ReminderEventData, and the reminder history): its fee, the late-payment interest posted at its step, and the fixed
 * compensation it claimed (take-reminder.ts writes all three on the reminder's row).
 */
export interface ReminderCharges {
  feeOere: number;
  interestOere: number;
  compensationOere: number;
}

export const reminderCharges = (reminder: { fee_oere: number; interest_oere: number | string; compensation_oere: number | string }): ReminderCharges => ({
  feeOere: reminder.fee_oere,
  interestOere: Number(reminder.interest_oere),
  compensationOere: Number(reminder.compensation_oere),
});
