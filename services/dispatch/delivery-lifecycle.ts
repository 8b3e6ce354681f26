import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../shared/db.ts';
import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The delivery lifecycle of a reminder (reminders.delivery, 013_reminders.sql), the record the dispatch's record and
 * give-up steps write (activities/reminders/deliver-reminder.ts): `pending` from the step that took the reminder
 * until its document is handed to its channel (`done`) or refused or given up (`none`); a reminder without a channel
 * is inserted as `none`. Each delivery record keeps its own table and column (the invoice's send, the portal sign-in
 * link's mail outcome and the case's påkrav date are written by their own use cases).
 */
export const REMINDER_DELIVERY = defineLifecycle({
  name: 'reminder delivery',
  table: 'reminders',
  column: 'delivery',
  states: ['pending', 'done', 'none'],
  transitions: {
    deliver: { from: ['pending'], to: 'done' },
    giveUp: { from: ['pending'], to: 'none' },
  },
  tenantColumn: null,
  touchColumn: null,
});

/**
 * Records a reminder's delivery once, with what it wrote beside it: a delivery no longer pending is left as it was
 * (the step recording it runs again after a crash), so recording twice changes nothing. Answers whether this call
 * recorded it, so that what goes with the outcome (its event) is written once too.
 */
export async function settleReminderDelivery(
  sql: Queryable,
  reminderId: string,
  transition: keyof typeof REMINDER_DELIVERY.transitions,
  set: PendingQuery<Row[]>,
): Promise<boolean> {
  return (await REMINDER_DELIVERY.tryTransition(sql, reminderId, transition, { set })) !== undefined;
}
