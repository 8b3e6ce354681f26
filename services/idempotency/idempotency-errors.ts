import { DomainError } from '../shared/errors.ts';

/**
 * The two answers a request gets for its Idempotency-Key before any effect: someone is still working under the key,
 * or the key was used for another request. Here, not in the API's idempotency module, because a use case that
 * stores its response itself (an issue, finished after its PDF is rendered) recognises its own earlier attempts.
 */
export const inProgress = () =>
  new DomainError('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly.', {
    headers: { 'Retry-After': '1' },
  });

export const idempotencyConflict = () =>
  new DomainError('idempotency_conflict', 'This Idempotency-Key was already used with a different request (method, path, query flags or body).');
