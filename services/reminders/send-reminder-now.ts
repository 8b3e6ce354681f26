import { WORK } from '../../contracts/workflows.ts';
import type { EngineClient } from '../shared/engine-client.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { sendManualReminder } from './send-manual-reminder.ts';

/**
 * POST /v1/invoices/{id}/reminders: the next reminder taken in the transaction (sendManualReminder); its document and
 * mail come from the invoice's Dunning object, poked after the commit (its wake-index row is due already).
 */
export function sendReminderNow(deps: { engine?: Pick<EngineClient, 'poke'> | undefined }, organizationId: string, invoiceId: string): MutationUseCase {
  const engine = deps.engine;
  return async (tx) => ({
    status: 200,
    data: await sendManualReminder(tx, organizationId, invoiceId),
    ...(engine ? { afterCommit: () => engine.poke(WORK.dunning(organizationId, invoiceId)) } : {}),
  });
}
