import type { ReminderSettingsReplace } from '../../contracts/reminders.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { assertCadenceValid, replaceReminderSettings } from './replace-reminder-settings.ts';

/**
 * PUT /v1/reminder-settings: the rules across cadence items are part of validation, checked (and thrown) before the
 * key is looked at, like the schema; the settings are replaced in the mutation, and after commit, never on a replay,
 * the dunning engine re-plans the open invoices (onReminderSettingsChanged; a failure is logged).
 */
export function changeReminderSettings(
  deps: { onReminderSettingsChanged?: ((organizationId: string) => Promise<void>) | undefined },
  organizationId: string,
  body: ReminderSettingsReplace,
): MutationUseCase {
  assertCadenceValid(body);
  const changed = deps.onReminderSettingsChanged;
  return async (tx) => ({
    status: 200,
    data: await replaceReminderSettings(tx, organizationId, body),
    ...(changed ? { afterCommit: async () => changed(organizationId) } : {}),
  });
}
