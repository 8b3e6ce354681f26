import type { Clock } from '../shared/clock.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { wakeDueAfterCommit, type Wakeups } from '../clock/wakeups.ts';
import { replayEndpoint } from './replay-endpoint.ts';

/**
 * POST /v1/webhook-endpoints/{id}/replay (replayEndpoint): the deliveries it queued again or for the first time are
 * woken after commit.
 */
export function replayDeliveries(
  deps: { clock: Clock; wakeups?: Wakeups | undefined },
  organizationId: string,
  endpointId: string,
  since: string,
  log: { warn(msg: string): void },
): MutationUseCase {
  return async (tx) => {
    const result = await replayEndpoint(tx, deps.clock, organizationId, endpointId, since);
    const queued = result.requeued + result.enqueued > 0;
    return { status: 200, data: result, ...(queued ? { afterCommit: wakeDueAfterCommit(deps.wakeups, organizationId, log) } : {}) };
  };
}
