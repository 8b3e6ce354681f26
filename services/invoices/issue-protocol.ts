import type { Queryable, Tx } from '../shared/db.ts';
import { idempotencyConflict, inProgress } from '../idempotency/idempotency-errors.ts';
import type { MutationResult, MutationUseCase } from '../idempotency/run-mutation.ts';
import { finishIssue, type FinishIssueDeps } from './finish-issue.ts';
import type { IssueDeps, IssueRequest } from './issue-invoice.ts';
import type { InvoiceMailDispatch } from './send-invoice.ts';
import { WORK } from '../../contracts/workflows.ts';
import type { EngineClient } from '../shared/engine-client.ts';

/**
 * The issue protocol, one for every request that issues an invoice (POST /v1/invoices with issue=true, POST
 * /v1/invoices/{id}/issue, POST /v1/subscriptions/{id}/run, and their batch operations):
 *
 * 0. resume: the request first looks for its own earlier attempt under its Idempotency-Key, a reservation it made and
 *    did not finish, and finishes that one instead of reserving again (`resumeIssue`);
 * 1. reserve: in the request's short transaction, the invoice takes the organisation's next number and is frozen
 *    (`reserveIssue`, issue-invoice.ts; a subscription's period reserves its invoice through it too, run-period.ts),
 *    with the reservation row saying which key's response the issue stores;
 * 2. and 3. finish: once that committed, the PDF is rendered outside any transaction, then the issue is committed with
 *    its stored response (`finishIssue`, finish-issue.ts), by the request itself, its retry or the workflows process.
 *
 * The SubscriptionSchedule's own runs take steps 1 to 3 the same way, under a key of their own per period
 * (`runScheduledPeriod`, run-period.ts); no earlier attempt of theirs can be waiting, as a period's receipt is written
 * with its reservation, so they have no step 0.
 *
 * Why it holds under a crash at any point: a reserved number is never given back, and every reservation is finished
 * (by the request, a retry with its key, or the InvoiceIssue object from the reservation's wake-index row), so the
 * number series has no gap; the reservation row is removed by the one finish that commits, and a retry finds it
 * (step 0) rather than reserving a second number, so nothing is issued twice.
 */

/** What a reservation records of the request that made it: where its response is stored once the issue finishes. */
export type ReservingRequest = Pick<IssueRequest, 'idempotencyKey' | 'requestHash' | 'responseStatus'>;

/** What an issuing request needs: the clock of its reservation, the renderer and store of its finish, its hand-offs. */
export type IssueProtocolDeps = FinishIssueDeps &
  Pick<IssueDeps, 'clock'> & { mailDispatch: InvoiceMailDispatch; engine?: Pick<EngineClient, 'poke'> | undefined };

/**
 * An issuing request as a use case, steps 0 to 3 above. `reserve` is step 1, in the mutation's transaction: it
 * reserves an invoice for the request (recording `reservation` with it) and answers its id, or answers a result of its
 * own when the request turns out to issue nothing (a creation without issue=true). `responseStatus` is the status the
 * request answers once its invoice is issued.
 */
export function issueUnderProtocol(
  deps: IssueProtocolDeps,
  organizationId: string,
  responseStatus: number,
  reserve: (tx: Tx, reservation: ReservingRequest) => Promise<string | MutationResult>,
): MutationUseCase {
  return async (tx, request) => {
    const reserved =
      (await resumeIssue(tx, organizationId, request)) ??
      (await reserve(tx, { idempotencyKey: request.key, requestHash: request.requestHash, responseStatus }));
    if (typeof reserved !== 'string') return reserved;
    // Steps 2 and 3 once the reservation has committed; the continuation stores and answers the response.
    return { status: responseStatus, continueWith: () => finishIssueResponse(deps, reserved) };
  };
}

/**
 * A retry that finds its earlier attempt's reservation this young is told to wait (409 idempotency_in_progress):
 * that attempt is most likely still rendering. An older one is finished by the retry itself.
 */
export const RESUME_AFTER_MS = 15_000;

/** The reservation a request with this key made earlier and did not finish, if there is one. */
async function findPendingIssue(
  sql: Queryable,
  organizationId: string,
  key: string,
): Promise<{ invoiceId: string; requestHash: Buffer; ageMs: number } | undefined> {
  const [row] = await sql<{ invoice_id: string; request_hash: Buffer; age_ms: number }[]>`
    SELECT invoice_id, request_hash, (extract(epoch FROM now() - reserved_at) * 1000)::float8 AS age_ms
    FROM invoice_issues WHERE organization_id = ${organizationId} AND idempotency_key = ${key}`;
  return row ? { invoiceId: row.invoice_id, requestHash: row.request_hash, ageMs: row.age_ms } : undefined;
}

/**
 * Step 0: an issuing request looks for its own earlier attempt first, one that reserved
 * a number under the same Idempotency-Key and has not finished (its response is stored only when it finishes, so the
 * key alone does not tell). Answers the invoice whose issue the request is to finish now, or undefined when there is
 * no such attempt and the request goes ahead. The key used with another request is 409 idempotency_conflict; a
 * reservation younger than RESUME_AFTER_MS is 409 idempotency_in_progress.
 */
async function resumeIssue(
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
interface FinishedIssueResponse {
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
async function finishIssueResponse(
  deps: IssueProtocolDeps,
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
