import type { InvoiceCreate } from '../../contracts/invoices.ts';
import { DomainError } from '../shared/errors.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { createInvoice } from './create-invoice.ts';
import { reserveIssue } from './issue-invoice.ts';
import { issueUnderProtocol, type IssueProtocolDeps } from './issue-protocol.ts';

/** Who creates the invoice: the organisation, and the scopes of the key (an inline customer needs customers:write). */
export interface InvoiceCreator {
  organizationId: string;
  scopes: ReadonlySet<string>;
}

/**
 * POST /v1/invoices (the route, and the batch's invoice.create): a draft, issued in the same request when `issue` (or
 * `send`, which issues and then mails it) asks for it, under the issue protocol. The checks beyond the schema are
 * thrown here, before any transaction: 400 for customerId with customer, 403 for an inline customer without
 * customers:write.
 */
export function createAndIssueInvoice(
  deps: IssueProtocolDeps,
  creator: InvoiceCreator,
  body: InvoiceCreate,
  flags: { issue?: boolean | undefined; send?: boolean | undefined },
): MutationUseCase {
  if ((body.customer === undefined) === (body.customerId === undefined)) {
    throw new DomainError('validation_failed', 'Give exactly one of customerId and customer.', {
      details: [{ path: body.customer ? '/customer' : '/customerId', message: 'exactly one of customerId and customer is required' }],
    });
  }
  if (body.customer && !creator.scopes.has('customers:write')) {
    throw new DomainError('insufficient_scope', 'An inline customer also needs the customers:write scope.', {
      details: [{ path: '/customer', message: 'required scope: customers:write' }],
    });
  }
  const send = flags.send === true;
  const issue = flags.issue === true || send;
  const org = creator.organizationId;
  return issueUnderProtocol(deps, org, 201, async (tx, reservation) => {
    const invoice = await createInvoice(tx, deps.keyring, org, body);
    const location = `/v1/invoices/${invoice.id}`;
    if (!issue) return { status: 201, data: invoice, location };
    await reserveIssue(tx, deps, org, invoice.id, {}, { ...reservation, responseLocation: location, send });
    return invoice.id;
  });
}
