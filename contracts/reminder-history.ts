import { Type, type Static } from 'typebox';
import { DateString, Nullable, Uuid } from './common.ts';

/** One reminder step taken on an invoice (docs/api-conventions.md, "Reminders"; docs/reminders.md, "A step"). */
export const ReminderHistoryItem = Type.Object(
  {
    id: Uuid,
    type: Type.Union([Type.Literal('payment_reminder'), Type.Literal('reminder')], { description: '`payment_reminder` is the free reminder before the fee-bearing ones' }),
    reminderNumber: Nullable(Type.Integer({ minimum: 1, maximum: 3, description: 'null for a payment reminder' })),
    feeOere: Type.Integer({ minimum: 0, maximum: 10_000, description: 'The fee this reminder added to the balance (0 when the law allowed none)' }),
    interestOere: Type.Integer({ minimum: 0, description: 'Late-payment interest posted at this step (0 while the organisation charges none)' }),
    compensationOere: Type.Integer({ minimum: 0, description: 'The 310 kr compensation charged at this step (31000 on the first step of a business customer’s arrears when charged; else 0)' }),
    channel: Nullable(Type.Union([Type.Literal('email'), Type.Literal('letter')], { description: 'null when there was no way to reach the customer' })),
    status: Type.Union([Type.Literal('sent'), Type.Literal('failed')]),
    failureCode: Nullable(Type.String({ description: 'Why it failed: customer_email_missing, customer_address_missing, mail_rejected, …; null when sent' })),
    demandLetter: Type.Boolean({ description: 'The plan\'s last reminder, which is also the demand letter (påkrav)' }),
    deadline: DateString,
    source: Type.Union([Type.Literal('automatic'), Type.Literal('manual')]),
    sentAt: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, title: 'ReminderHistoryItem' },
);
export type ReminderHistoryItem = Static<typeof ReminderHistoryItem>;

export const NextReminder = Type.Object(
  {
    type: Type.Union([Type.Literal('payment_reminder'), Type.Literal('reminder')]),
    reminderNumber: Nullable(Type.Integer({ minimum: 1, maximum: 3 })),
    date: DateString,
  },
  { additionalProperties: false, title: 'NextReminder', description: "The engine's next planned reminder of the invoice and its date" },
);

export const ReminderHistoryMeta = Type.Object(
  {
    maxReminders: Type.Integer({ minimum: 0, maximum: 3, description: "The plan's number of fee-bearing reminders" }),
    nextReminder: Nullable(NextReminder),
  },
  { additionalProperties: false },
);

export const ReminderSent = Type.Object(
  {
    reminderNumber: Type.Integer({ minimum: 1, maximum: 3 }),
    feeOere: Type.Integer({ minimum: 0, maximum: 10_000 }),
    collectionsReady: Type.Boolean({ description: 'The plan\'s last reminder has been sent: the invoice can be handed to debt collection' }),
  },
  { additionalProperties: false, title: 'ReminderSent' },
);
export type ReminderSent = Static<typeof ReminderSent>;
