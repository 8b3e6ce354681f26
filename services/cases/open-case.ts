import type { CaseCreate } from '../../contracts/cases.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { EngineClient } from '../shared/engine-client.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { createCase } from './create-case.ts';
import { openedCaseResult } from './opened-case-result.ts';

/** POST /v1/cases: a collection case from the body's claims and debtors (createCase), or the one its reference has. */
export function openCase(deps: { keyring: Keyring; engine?: Pick<EngineClient, 'poke'> | undefined }, organizationId: string, body: CaseCreate): MutationUseCase {
  return async (tx, request) => openedCaseResult(deps.engine, organizationId, await createCase(tx, deps.keyring, organizationId, body, request.now));
}
