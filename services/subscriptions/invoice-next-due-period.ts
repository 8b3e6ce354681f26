import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { issueUnderProtocol, type IssueProtocolDeps } from '../invoices/issue-protocol.ts';
import { notDue, reservePeriodRun } from './run-period.ts';

/**
 * POST /v1/subscriptions/{id}/run: the oldest due period's invoice, reserved with its run receipt under the
 * subscription's lease (waiting up to RUN_LEASE_WAIT for another run) and issued under the issue protocol, as the
 * schedule would issue it. Nothing due is 422 subscription_not_due.
 */
export function invoiceNextDuePeriod(deps: IssueProtocolDeps, organizationId: string, subscriptionId: string): MutationUseCase {
  return issueUnderProtocol(deps, organizationId, 201, async (tx, reservation) => {
    const run = await reservePeriodRun(tx, deps, organizationId, subscriptionId, reservation, { wait: true });
    if (!run) throw notDue();
    return run.invoiceId;
  });
}
