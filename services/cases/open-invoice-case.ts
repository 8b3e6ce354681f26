import type { EngineClient } from '../shared/engine-client.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { collectInvoice } from './collect-invoice.ts';
import { openedCaseResult } from './opened-case-result.ts';

/** POST /v1/invoices/{id}/collect: the invoice handed to debt collection as a case of its own (collectInvoice). */
export function openInvoiceCase(deps: { engine?: Pick<EngineClient, 'poke'> | undefined }, organizationId: string, invoiceId: string): MutationUseCase {
  return async (tx, request) => openedCaseResult(deps.engine, organizationId, await collectInvoice(tx, organizationId, invoiceId, request.now));
}
