import type { Keyring } from '../shared/crypto.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { getInvoiceOrThrow } from './invoice-queries.ts';
import { requestInvoiceSend, type InvoiceMailDispatch } from './send-invoice.ts';

/**
 * POST /v1/invoices/{id}/send: the send is requested in the transaction (requestInvoiceSend) and answered with the
 * invoice and `meta.send`; the mail itself is handed to the mail workflow after the commit.
 */
export function emailInvoice(
  deps: { keyring: Keyring; mailDomain: string; mailDispatch: InvoiceMailDispatch },
  organizationId: string,
  invoiceId: string,
): MutationUseCase {
  return async (tx) => {
    const requested = await requestInvoiceSend(tx, deps.keyring, organizationId, invoiceId, deps.mailDomain);
    return {
      status: 200,
      data: await getInvoiceOrThrow(tx, organizationId, invoiceId),
      meta: { send: requested.send },
      ...(requested.dispatch ? { afterCommit: () => deps.mailDispatch.dispatch(organizationId, invoiceId) } : {}),
    };
  };
}
