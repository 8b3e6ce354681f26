import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of a reminder's delivery (reminders.delivery, 013_reminders.sql):
 *
 *   (step taken with a channel) → pending → done (mailed or posted) | none (refused for good: the reminder `failed`);
 *   (step taken without a channel) → none.
 *
 * A pending delivery is what the dunning loop still has to finish before the invoice's next step.
 */
export const REMINDER_DELIVERIES = ['pending', 'done', 'none'] as const;
export type ReminderDelivery = (typeof REMINDER_DELIVERIES)[number];

/** A new reminder's delivery (its INSERT): pending with a channel to send it by, none without. */
export const PENDING_DELIVERY = 'pending' as const satisfies ReminderDelivery;
export const NO_DELIVERY = 'none' as const satisfies ReminderDelivery;

export const initialReminderDelivery = (hasChannel: boolean): ReminderDelivery => (hasChannel ? PENDING_DELIVERY : NO_DELIVERY);

export const REMINDER_DELIVERY_TRANSITIONS = {
  /** Mailed, or handed to the letter service. */
  deliver: { from: ['pending'], to: 'done' },
  /** Refused for good: no delivery will come. */
  giveUp: { from: ['pending'], to: 'none' },
} as const;

export const REMINDER_DELIVERY_LIFECYCLE = defineLifecycle({
  name: 'reminder delivery',
  table: 'reminders',
  column: 'delivery',
  states: REMINDER_DELIVERIES,
  transitions: REMINDER_DELIVERY_TRANSITIONS,
});
