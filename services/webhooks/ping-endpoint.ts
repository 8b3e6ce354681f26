import type { Clock } from '../shared/clock.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { wakeDueAfterCommit, type Wakeups } from '../clock/wakeups.ts';
import { sendTestPing } from './send-test-ping.ts';

/** POST /v1/webhook-endpoints/{id}/test: a `webhook.ping` queued for the endpoint (sendTestPing), woken after commit. */
export function pingEndpoint(
  deps: { clock: Clock; wakeups?: Wakeups | undefined },
  organizationId: string,
  endpointId: string,
  log: { warn(msg: string): void },
): MutationUseCase {
  return async (tx) => ({
    status: 202,
    data: await sendTestPing(tx, deps.clock, organizationId, endpointId),
    afterCommit: wakeDueAfterCommit(deps.wakeups, organizationId, log),
  });
}
