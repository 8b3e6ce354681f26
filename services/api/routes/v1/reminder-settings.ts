import type { FastifyInstance } from 'fastify';
import { STATUTORY_FEE_OERE } from '../../../law/danish-law.ts';
import { Envelope } from '../../../../contracts/common.ts';
import { ReminderSettingsReplace, ReminderSettingsView } from '../../../../contracts/reminders.ts';
import { getReminderSettings } from '../../../reminders/get-reminder-settings.ts';
import { changeReminderSettings } from '../../../reminders/change-reminder-settings.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const tags = ['Reminders'];

export function reminderSettingsRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db } = deps;

  app.get(
    '/reminder-settings',
    {
      config: { scope: 'reminders:read' },
      schema: {
        summary: 'The organisation’s reminder settings',
        description:
          'The settings in force, defaults filled in for an organisation that has set none: 3 reminders at the ' +
          'statutory fee (`feeOere` null, `effectiveFeeOere` ' + STATUTORY_FEE_OERE + ') on 7, 14 and 21 days after the due date, no ' +
          'payment reminder (3 days), no automatic collection, no letter fallback.',
        tags,
        response: { 200: Envelope(ReminderSettingsView) },
      },
    },
    async (req) => ({ data: await db.read((sql) => getReminderSettings(sql, req.auth.organizationId)), meta: {} }),
  );

  app.put<{ Body: ReminderSettingsReplace }>(
    '/reminder-settings',
    {
      config: { scope: 'reminders:write' },
      schema: {
        summary: 'Replace the reminder settings',
        description:
          'Full replacement: all seven fields, no others (`effectiveFeeOere` is read-only). The cadence is three steps, ' +
          'reminders 1, 2, 3 in that order with strictly increasing `daysAfterDue` (400 `validation_failed` at the ' +
          'offending item). An enabled payment reminder must come before the first reminder (422 ' +
          '`invalid_reminder_settings`). Answers the settings as `GET` does. New settings apply to every reminder step ' +
          'not yet taken.',
        tags,
        body: ReminderSettingsReplace,
        response: { 200: Envelope(ReminderSettingsView) },
      },
    },
    async (req, reply) => mutate(deps, req, reply, changeReminderSettings(deps, req.auth.organizationId, req.body)),
  );
}
