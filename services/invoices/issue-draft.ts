import type { IssueBody } from '../../contracts/invoices.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { reserveIssue } from './issue-invoice.ts';
import { issueUnderProtocol, type IssueProtocolDeps } from './issue-protocol.ts';

/** POST /v1/invoices/{id}/issue: the draft takes its number and its PDF under the issue protocol; no mail is sent. */
export function issueDraft(deps: IssueProtocolDeps, organizationId: string, invoiceId: string, body: IssueBody): MutationUseCase {
  return issueUnderProtocol(deps, organizationId, 200, async (tx, reservation) => {
    await reserveIssue(tx, deps, organizationId, invoiceId, body, { ...reservation, responseLocation: null, send: false });
    return invoiceId;
  });
}
