import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of a reminder's outcome (reminders.status, 013_reminders.sql): a reminder is written when its step is
 * taken (it counts from then on: fee, number, the invoice's next step), as `sent`, or as `failed` at once when there
 * is no channel to send it by; a sent one becomes `failed` when its delivery is refused for good (the server refused,
 * the letter service gave up), with `failure_code` saying why.
 * Its delivery has a lifecycle of its own (reminder-delivery-lifecycle.ts).
 */
export const REMINDER_STATUSES = ['sent', 'failed'] as const;
export type ReminderStatus = (typeof REMINDER_STATUSES)[number];

/** A new reminder's status (its INSERT): sent, or failed without a channel. */
export const INITIAL_REMINDER_STATUS = 'sent' as const satisfies ReminderStatus;

export const initialReminderStatus = (hasChannel: boolean): ReminderStatus => (hasChannel ? INITIAL_REMINDER_STATUS : REMINDER_TRANSITIONS.fail.to);

export const REMINDER_TRANSITIONS = {
  /** Its delivery was refused for good. */
  fail: { from: ['sent'], to: 'failed' },
} as const;

export const REMINDER_LIFECYCLE = defineLifecycle({
  name: 'reminder',
  table: 'reminders',
  column: 'status',
  stateNoun: 'status',
  // reminders has no updated_at (013_reminders.sql): a reminder's times are its sent and delivered columns.
  touchColumn: null,
  states: REMINDER_STATUSES,
  transitions: REMINDER_TRANSITIONS,
});
