import { REMINDER_DELIVERY } from '../dispatch/delivery-lifecycle.ts';

/**
 * The lifecycle of a reminder's delivery (reminders.delivery, 013_reminders.sql), as the reminder's own steps name it.
 * It is defined once, with the delivery record the dispatch writes (services/dispatch/delivery-lifecycle.ts):
 *
 *   (step taken with a channel) → pending → done (mailed or posted) | none (refused for good: the reminder `failed`);
 *   (step taken without a channel) → none.
 *
 * A pending delivery is what the dunning loop still has to finish before the invoice's next step.
 */
export const REMINDER_DELIVERY_LIFECYCLE = REMINDER_DELIVERY;

export type ReminderDelivery = (typeof REMINDER_DELIVERY.states)[number];

/** A new reminder's delivery (its INSERT): pending with a channel to send it by, none without. */
export const PENDING_DELIVERY = REMINDER_DELIVERY.state.pending;
export const NO_DELIVERY = REMINDER_DELIVERY.state.none;

export const initialReminderDelivery = (hasChannel: boolean): ReminderDelivery => (hasChannel ? PENDING_DELIVERY : NO_DELIVERY);
