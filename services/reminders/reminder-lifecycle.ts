import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of a reminder's outcome (reminders.status, 013_reminders.sql): a reminder is written as `sent` when
 * its step is taken (it counts from then on: fee, number, the invoice's next step), and becomes `failed` when its
 * delivery is refused for good (no address, no letter channel, the server refused), with `failure_code` saying why.
 * Its delivery has a lifecycle of its own (reminder-delivery-lifecycle.ts).
 */
export const REMINDER_STATUSES = ['sent', 'failed'] as const;
export type ReminderStatus = (typeof REMINDER_STATUSES)[number];

/** A new reminder's status (its INSERT). */
export const INITIAL_REMINDER_STATUS = 'sent' as const satisfies ReminderStatus;

export const REMINDER_TRANSITIONS = {
  /** Its delivery was refused for good. */
  fail: { from: ['sent'], to: 'failed' },
} as const;

export const REMINDER_LIFECYCLE = defineLifecycle({
  name: 'reminder',
  table: 'reminders',
  column: 'status',
  stateNoun: 'status',
  states: REMINDER_STATUSES,
  transitions: REMINDER_TRANSITIONS,
});
