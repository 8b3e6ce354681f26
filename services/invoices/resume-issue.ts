import type { Queryable } from '../shared/db.ts';
import { idempotencyConflict, inProgress } from '../idempotency/idempotency-errors.ts';
import { findPendingIssue, finishIssue, type FinishIssueDeps } from './finish-issue.ts';
import type { InvoiceMailDispatch } from './send-invoice.ts';
import { WORK } from '../../contracts/workflows.ts';
import type { EngineClient } from '../shared/engine-client.ts';

/**
 * A retry that finds its earlier attempt's reservation this young is told to wait (409 idempotency_in_progress):
 * that attempt is most likely still rendering. An older one is finished by the retry itself.
 */
export const RESUME_AFTER_MS = 15_000;

/**
 * An issuing request (create with `issue=true`, or issue) looks for its own earlier attempt first: one that reserved
 * a number under the same Idempotency-Key and has not finished (its response is stored only when it finishes, so the
 * key alone does not tell). Answers the invoice whose issue the request is to finish now, or undefined when there is
 * no such attempt and the request goes ahead. The key used with another request is 409 idempotency_conflict; a
 * reservation younger than RESUME_AFTER_MS is 409 idempotency_in_progress.
 */
export async function resumeIssue(
  sql: Queryable,
  organizationId: string,
  request: { key: string; requestHash: Buffer },
): Promise<string | undefined> {
  const pending = await findPendingIssue(sql, organizationId, request.key);
  if (!pending) return undefined;
  if (!pending.requestHash.equals(request.requestHash)) throw idempotencyConflict();
  if (pending.ageMs < RESUME_AFTER_MS) throw inProgress();
  return pending.invoiceId;
}

/** The answer of a finished issue, as the request that finishes it sends it. */
export interface FinishedIssueResponse {
  status: number;
  body: string;
  location: string | null;
  /** Hands the mail the finishing transaction queued to the mail workflow; runs after the commit. */
  afterCommit?: () => Promise<void>;
}

/**
 * Steps 2 and 3 of an issue, once its reservation has committed (finishIssue), answered as the stored response.
 * Undefined when someone else finished it first: their stored response is then the answer.
 */
export async function finishIssueResponse(
  deps: FinishIssueDeps & { mailDispatch: InvoiceMailDispatch; engine?: Pick<EngineClient, 'poke'> | undefined },
  invoiceId: string,
): Promise<FinishedIssueResponse | undefined> {
  const done = await finishIssue(deps, invoiceId);
  if (!done) return undefined;
  return {
    status: done.status,
    body: done.body,
    location: done.location,
    ...(done.dispatchMail || (done.dunningDue && deps.engine)
      ? {
          afterCommit: async () => {
            if (done.dispatchMail) await deps.mailDispatch.dispatch(done.organizationId, done.invoiceId);
            // Issued already past due: its dunning is due now, not at the next clock advance or housekeeping pass.
            if (done.dunningDue) await deps.engine?.poke(WORK.dunning(done.organizationId, done.invoiceId));
          },
        }
      : {}),
  };
}
