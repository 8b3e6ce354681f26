import type { CaseStatusView } from '../../contracts/cases.ts';
import { WORK } from '../../contracts/workflows.ts';
import type { EngineClient } from '../shared/engine-client.ts';
import type { MutationResult } from '../idempotency/run-mutation.ts';

/**
 * The answer of a request that opens a collection case (POST /v1/cases, POST /v1/invoices/{id}/collect): 201 with the
 * new case, whose Case object is poked after the commit; 200 with `meta.replayed: true` when the case existed already.
 */
export function openedCaseResult(
  engine: Pick<EngineClient, 'poke'> | undefined,
  organizationId: string,
  opened: { created: boolean; view: CaseStatusView },
): MutationResult {
  const { created, view } = opened;
  const location = `/v1/cases/${view.id}`;
  if (!created) return { status: 200, data: view, meta: { replayed: true }, location };
  return {
    status: 201,
    data: view,
    location,
    // The case's first step (its påkrav): its wake-index row is due now, so a lost poke only delays it.
    ...(engine ? { afterCommit: () => engine.poke(WORK.collectionCase(organizationId, view.id)) } : {}),
  };
}
