import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope } from '../../../../contracts/common.ts';
import { ReminderHistoryItem, ReminderHistoryMeta, ReminderSent } from '../../../../contracts/reminder-history.ts';
import { listReminders } from '../../../reminders/list-reminders.ts';
import { sendReminderNow } from '../../../reminders/send-reminder-now.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const InvoiceParams = Type.Object({ invoiceId: Type.String({ description: 'Invoice id (UUID)' }) }, { additionalProperties: false });
const HistoryEnvelope = Type.Object({ data: Type.Array(ReminderHistoryItem), meta: ReminderHistoryMeta }, { additionalProperties: false });
const tags = ['Reminders'];

export function reminderRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db } = deps;

  app.get<{ Params: { invoiceId: string } }>(
    '/invoices/:invoiceId/reminders',
    {
      config: { scope: 'reminders:read' },
      schema: {
        summary: "An invoice's reminders, oldest first, with the engine's next planned one",
        description:
          '`meta.maxReminders` is the plan\'s number of fee-bearing reminders; `meta.nextReminder` the next reminder the engine ' +
          'plans and its date (null when none is left). A draft: 422 invoice_not_issued.',
        tags,
        params: InvoiceParams,
        response: { 200: HistoryEnvelope },
      },
    },
    async (req) => {
      const { items, maxReminders, nextReminder } = await db.read((sql) => listReminders(sql, req.auth.organizationId, req.params.invoiceId));
      return { data: items, meta: { maxReminders, nextReminder } };
    },
  );

  app.post<{ Params: { invoiceId: string } }>(
    '/invoices/:invoiceId/reminders',
    {
      config: { scope: 'reminders:write' },
      schema: {
        summary: 'Send the next reminder now',
        description:
          'Takes the next reminder number, by e-mail (or a letter when `letterFallback` is on and the customer has no e-mail), ' +
          'with the fee the law allows today (none sooner than 10 days after the previous fee, at most 3 fees per invoice and ' +
          'per continuous arrears). 422 reminder_not_eligible (not issued, not past due, nothing to pay, in collections), ' +
          'reminder_limit_reached (3 reminders already), customer_email_missing, customer_address_missing; nothing is recorded then.',
        tags,
        params: InvoiceParams,
        response: { 200: Envelope(ReminderSent) },
      },
    },
    (req, reply) => mutate(deps, req, reply, sendReminderNow(deps, req.auth.organizationId, req.params.invoiceId)),
  );
}
