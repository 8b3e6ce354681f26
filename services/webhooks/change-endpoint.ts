import type { WebhookEndpointPatch } from '../../contracts/webhooks.ts';
import type { Clock } from '../shared/clock.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { wakeDueAfterCommit, type Wakeups } from '../clock/wakeups.ts';
import { updateEndpoint } from './manage-endpoints.ts';

/** PATCH /v1/webhook-endpoints/{id} (updateEndpoint): a reactivated endpoint's pending deliveries are woken after commit. */
export function changeEndpoint(
  deps: { clock: Clock; wakeups?: Wakeups | undefined },
  organizationId: string,
  endpointId: string,
  patch: WebhookEndpointPatch,
  log: { warn(msg: string): void },
): MutationUseCase {
  return async (tx) => {
    const { endpoint, reactivated } = await updateEndpoint(tx, deps.clock, organizationId, endpointId, patch);
    return { status: 200, data: endpoint, ...(reactivated ? { afterCommit: wakeDueAfterCommit(deps.wakeups, organizationId, log) } : {}) };
  };
}
