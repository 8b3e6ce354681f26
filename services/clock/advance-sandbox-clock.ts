import type { TestClockAdvance } from '../../contracts/test-clock.ts';
import { DomainError } from '../shared/errors.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { reconcilePastDue } from '../customers/past-due-transitions.ts';
import { advanceTestClock } from './test-clock.ts';
import { wakeDueAfterCommit, type Wakeups } from './wakeups.ts';

/**
 * POST /v1/test-clock/advance: a sandbox organisation's test clock moves forward (advanceTestClock), and what the move
 * made due follows. A live organisation has no test clock: 403 sandbox_only, thrown before any transaction.
 */
export function advanceSandboxClock(
  deps: { wakeups?: Wakeups | undefined },
  caller: { organizationId: string; sandbox: boolean },
  body: TestClockAdvance,
  log: { warn(msg: string): void },
): MutationUseCase {
  if (!caller.sandbox) throw new DomainError('sandbox_only', 'Only sandbox organisations have a test clock; live organisations run on real time.');
  const org = caller.organizationId;
  return async (tx) => {
    const clock = await advanceTestClock(tx, org, body);
    // Invoices fall due as the clock moves: customers crossing the past-due threshold (either way) are announced
    // in this transaction, so the events are in the log when the advance answers.
    await reconcilePastDue(tx, org, clock.today);
    // Timed steps whose business time has come are woken once the advance is committed.
    return { status: 200, data: clock, afterCommit: wakeDueAfterCommit(deps.wakeups, org, log) };
  };
}
