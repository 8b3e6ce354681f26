import type { FastifyBaseLogger } from 'fastify';
import type { Db, Tx } from '../shared/db.ts';
import type { Keyring } from '../shared/crypto.ts';
import { DomainError } from '../shared/errors.ts';
import { errorBody } from '../shared/error-envelope.ts';
import { responseJson, storeResponse } from './stored-response.ts';
import { idempotencyConflict, inProgress } from './idempotency-errors.ts';

/**
 * Idempotent mutations (docs/api-conventions.md, "Idempotency").
 *
 * Invariant: a stored response exists exactly when its effect was committed. `runMutation` runs the use case and
 * inserts the response into idempotency_keys in one transaction. Concurrent requests with the same key are told
 * apart by a transaction-scoped advisory lock (the loser gets 409 idempotency_in_progress); should two ever get
 * past it, the primary key on (organisation, key) makes the second transaction roll back and replay the first.
 * A crash at any point rolls back both the effect and the key, so a retry simply runs again.
 * An effect in two steps (issuing: reserve the number, render, finish) stores its response with its second step;
 * until then its own records say which key it belongs to (see `continueWith`).
 */
export interface MutationResult {
  status: number;
  data?: unknown;
  meta?: Record<string, unknown>;
  location?: string;
  /**
   * Runs once the transaction has committed (never on a replay): hands work to the durable engine. A failure here
   * is logged, not answered: the effect is committed, and the housekeeping loop picks the work up from the wake index.
   */
  afterCommit?: () => Promise<void>;
  /**
   * The effect is finished after this transaction commits, outside it (an issue renders its PDF between its two
   * transactions). The transaction then stores no response: the continuation stores it in its own transaction,
   * together with the rest of the effect, and answers with it. It answers undefined when someone else finished the
   * effect first; the stored response is then replayed. While it has not finished, requests with the key are the
   * use case's to recognise (they find the unfinished effect and finish it, or are told it is in progress).
   */
  continueWith?: () => Promise<CommittedResponse | undefined>;
  /**
   * Writes the use case started (`.execute()`, before returning) and did not wait for, because the response does not
   * depend on their results. They travel in one round trip with the stored response, before the COMMIT. If one fails,
   * the transaction is rolled back and its error is thrown as the use case's own.
   */
  pending?: Promise<unknown>;
}

/** A response already stored under the key, as the continuation of a two-step effect answers it. */
export interface CommittedResponse {
  status: number;
  body: string | null;
  location: string | null;
  afterCommit?: () => Promise<void>;
}

/** What a use case knows of the request behind it, for effects that store the response themselves. */
export interface MutationRequest {
  key: string;
  requestHash: Buffer;
  /** The transaction's timestamp, PostgreSQL's now(): what every default of now() in this transaction writes. */
  now: Date;
}

/**
 * A use case as the API's routes and the batch run it: given the mutation's transaction and what it knows of the
 * request, it does its work and says what to answer. Its checks that need no database are thrown before it is built.
 */
export type MutationUseCase = (tx: Tx, request: MutationRequest) => Promise<MutationResult>;

interface StoredResponse {
  request_hash: Buffer;
  response_status: number;
  response_body: Buffer | null;
  response_location: string | null;
}

class LostRace extends Error {}

type Outcome =
  | { stored: StoredResponse }
  | { result: MutationResult; body: string | null }
  | { continueWith: NonNullable<MutationResult['continueWith']> };

/**
 * The transaction of one attempt. The use case's deferred writes (`MutationResult.pending`) travel in one round trip
 * with the stored response; COMMIT follows once both have settled, so every statement of the attempt, including one
 * the driver re-sends after a failed prepared statement, runs inside the transaction. A statement that fails aborts
 * the transaction; the failure is thrown, the transaction rolled back, and nothing of the attempt is kept.
 */
async function mutationTransaction(
  db: Db,
  keyring: Keyring,
  m: { org: string; key: string; hash: Buffer; lockId: string },
  useCase: MutationUseCase,
): Promise<Outcome> {
  return db.tx(async (tx) => {
    let pending: Promise<unknown> | undefined;
    try {
      const [probe] = await tx<({ locked: boolean; now: Date } & Partial<StoredResponse>)[]>`
        SELECT pg_try_advisory_xact_lock(${m.lockId}::bigint) AS locked, now() AS now,
               k.request_hash, k.response_status, k.response_body, k.response_location
        FROM (SELECT 1) AS one
        LEFT JOIN idempotency_keys k ON k.organization_id = ${m.org} AND k.key = ${m.key}`;
      if (!probe!.locked) throw inProgress();
      if (probe!.response_status != null) return { stored: probe as StoredResponse };
      const result = await useCase(tx, { key: m.key, requestHash: m.hash, now: probe!.now });
      // A two-step effect commits its first step here and stores its response itself (no deferred writes).
      if (result.continueWith) return { continueWith: result.continueWith };
      pending = result.pending;
      const body = result.status === 204 ? null : responseJson(result.data, result.meta);
      // A key stored meanwhile by a request that got past the lock stores nothing: the transaction rolls back with the
      // effect, and the loop replays the winner.
      const store = storeResponse(tx, keyring, {
        organizationId: m.org, key: m.key, requestHash: m.hash, status: result.status, body, location: result.location ?? null,
      });
      const [written, stored] = await Promise.allSettled([pending ?? Promise.resolve(), store]);
      pending = undefined;
      if (written.status === 'rejected') throw written.reason;
      if (stored.status === 'rejected') throw stored.reason;
      if (!stored.value) throw new LostRace();
      return { result, body };
    } finally {
      // Deferred writes are never left unobserved, whatever the way out.
      if (pending) await pending.catch(() => {});
    }
  });
}

export interface MutationDeps {
  db: Db;
  keyring: Keyring;
}

/** Who asks for a mutation under which key: what `runMutation` needs of a request. */
export interface MutationTarget {
  org: string;
  key: string;
  /** The request's fingerprint (`requestFingerprint`). */
  hash: Buffer;
  /** Echoed as `error.requestId` in stored and replayed errors. */
  requestId: string;
  log: Pick<FastifyBaseLogger, 'error'>;
}

/** The answer of a mutation, stored or replayed: what the route sends (or the batch reports). */
export interface MutationAnswer {
  status: number;
  /** The JSON text, or null for a 204. A replay's has `meta.replayed: true` and this request's `error.requestId`. */
  body: string | null;
  location: string | null;
  replayed: boolean;
}

/**
 * Runs the use case under (organisation, key) with the stored-response rules above and answers with what is to be
 * sent: the API's routes (`mutate`, services/api/idempotency.ts) and the batch's operations both run their use cases
 * here. Throws what the route would answer as an error (409s, a refusal it does not store, a 400 of the use case).
 */
export async function runMutation(
  deps: MutationDeps,
  target: MutationTarget,
  useCase: MutationUseCase,
): Promise<MutationAnswer> {
  const { db, keyring } = deps;
  const { org, key, hash } = target;
  const lockId = keyring.mac(`idempotency-lock\n${org}\n${key}`).readBigInt64BE(0).toString();

  for (let attempt = 0; ; attempt++) {
    let outcome: Outcome;
    try {
      outcome = await mutationTransaction(db, keyring, { org, key, hash, lockId }, useCase);
    } catch (err) {
      if (err instanceof LostRace && attempt < 3) continue;
      if (err instanceof DomainError && STORED_REJECTIONS.has(err.status) && !err.code.startsWith('idempotency_') && !CONFIGURATION_REFUSALS.has(err.code)) {
        // The use case may have been refused *because* a concurrent request with this key just committed its
        // effect (its snapshot predated that commit). Then the caller gets that request's response, not ours.
        const stored = (await storeError(deps, target, err)) ?? undefined;
        if (stored) return replay(keyring, target, stored);
      }
      throw err;
    }
    if ('stored' in outcome) return replay(keyring, target, outcome.stored);
    let committed: CommittedResponse;
    if ('continueWith' in outcome) {
      let finished: CommittedResponse | undefined;
      try {
        finished = await outcome.continueWith();
      } catch (err) {
        // The first step is committed and the rest is finished later (a retry with this key, or the workflows
        // process): the caller is told to retry, as for a request still in progress.
        target.log.error({ err }, 'a committed effect could not be finished now; it is finished by a retry or by the workflows process');
        throw inProgress();
      }
      // Someone else finished it first: their stored response is the answer.
      if (!finished) {
        if (attempt < 3) continue;
        throw inProgress();
      }
      committed = finished;
    } else {
      const { result, body } = outcome;
      committed = { status: result.status, body, location: result.location ?? null, ...(result.afterCommit ? { afterCommit: result.afterCommit } : {}) };
    }
    if (committed.afterCommit) {
      await committed.afterCommit().catch((err: unknown) => target.log.error({ err }, 'post-commit hand-off failed; the effect is committed and the hand-off is retried by repeating the request'));
    }
    return { status: committed.status, body: committed.body, location: committed.location, replayed: false };
  }
}

/** Business rejections that become part of a key's history; 400s never do (they do not consume the key). */
const STORED_REJECTIONS = new Set([404, 409, 422]);

/**
 * Refusals owed to the organisation's configuration rather than to the request: like a 400 they do not consume the
 * key, so the same request with the same key goes through once the operator has fixed the configuration.
 */
const CONFIGURATION_REFUSALS: ReadonlySet<string> = new Set(['seller_details_incomplete']);

/**
 * A business rejection is part of the key's history too: retrying the same request replays it. It has no effect
 * to be atomic with, so it is written on its own and the first writer wins. Returns the response stored earlier
 * by another request with this key, if there is one (then that one is the answer).
 */
async function storeError(deps: MutationDeps, target: MutationTarget, err: DomainError): Promise<StoredResponse | undefined> {
  const body = JSON.stringify(errorBody({ id: target.requestId }, err));
  const { org, key, hash } = target;
  return deps.db.tx(async (tx) => {
    const stored = await storeResponse(tx, deps.keyring, { organizationId: org, key, requestHash: hash, status: err.status, body, location: null });
    if (stored) return undefined;
    const [earlier] = await tx<StoredResponse[]>`
      SELECT request_hash, response_status, response_body, response_location
      FROM idempotency_keys WHERE organization_id = ${org} AND key = ${key}`;
    return earlier;
  });
}

function replay(keyring: Keyring, target: MutationTarget, stored: StoredResponse): MutationAnswer {
  if (!target.hash.equals(stored.request_hash)) throw idempotencyConflict();
  const answer = { status: stored.response_status, location: stored.response_location, replayed: true };
  if (!stored.response_body) return { ...answer, body: null };
  const body = JSON.parse(keyring.decrypt(stored.response_body)) as { meta?: Record<string, unknown>; error?: { requestId: string } };
  if (body.meta) body.meta.replayed = true;
  // error.requestId always echoes this response's Request-Id header (docs/api-conventions.md, "Envelopes and errors").
  if (body.error) body.error.requestId = target.requestId;
  return { ...answer, body: JSON.stringify(body) };
}
