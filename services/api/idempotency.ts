import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../services/shared/errors.ts';
import { requestFingerprint } from '../idempotency/request-fingerprint.ts';
import { runMutation, type MutationAnswer, type MutationDeps, type MutationUseCase } from '../idempotency/run-mutation.ts';

/**
 * The HTTP side of idempotent mutations: which routes need an Idempotency-Key, the key's checks, and `mutate`, which
 * runs a route's use case under the key (services/idempotency/run-mutation.ts holds the rules) and sends its answer.
 */

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isMutating(method: string | string[]): boolean {
  return (Array.isArray(method) ? method : [method]).some((m) => MUTATING.has(m.toUpperCase()));
}

/** preValidation hook of mutating routes: the key must be present and 8..128 characters. */
export function requireIdempotencyKey(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const raw = req.headers['idempotency-key'];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || key === '') {
    return done(new DomainError('idempotency_key_missing', 'Mutating requests need an Idempotency-Key header (8..128 characters).'));
  }
  // Only the length is ruled (docs/api-conventions.md, "Idempotency"): a header value holds no control characters,
  // which HTTP refuses anyway, and a key that is all spaces is not a key (header values are trimmed, so it would arrive
  // shorter).
  if (key.length < 8 || key.length > 128 || key.trim() === '') {
    return done(new DomainError('idempotency_key_invalid', 'The Idempotency-Key must be 8..128 characters.'));
  }
  req.idempotencyKey = key;
  done();
}

/** A route's mutation: its use case run under the request's Idempotency-Key and fingerprint, its answer sent. */
export async function mutate(
  deps: MutationDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  useCase: MutationUseCase,
): Promise<FastifyReply> {
  const hash = requestFingerprint(deps.keyring, req.method, req.url, req.body);
  const answer = await runMutation(deps, { org: req.auth.organizationId, key: req.idempotencyKey!, hash, requestId: req.id, log: req.log }, useCase);
  return sendAnswer(reply, answer);
}

/** Sends a mutation's answer: status, `Location`, `Idempotent-Replayed` on a replay, and the JSON text as it is. */
export function sendAnswer(reply: FastifyReply, answer: MutationAnswer): FastifyReply {
  if (answer.replayed) reply.header('Idempotent-Replayed', 'true');
  if (answer.location) reply.header('Location', answer.location);
  reply.code(answer.status);
  if (answer.body === null) return reply.send();
  return reply.type('application/json; charset=utf-8').send(answer.body);
}
