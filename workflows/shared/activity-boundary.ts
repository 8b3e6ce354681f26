import * as restate from '@restatedev/restate-sdk';
import { DomainError } from '../../services/shared/errors.ts';

/**
 * The boundary between a durable step and the use case it calls. A DomainError is a business refusal (the invoice
 * was credited meanwhile, the organisation is gone): the same call would be refused again, so it becomes a
 * TerminalError and is never retried. Every other error (a dropped connection, a browser that crashed) stays
 * retryable under the step's policy.
 */
export function terminalOnRefusal<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      if (err instanceof DomainError) throw new restate.TerminalError(`${err.code}: ${err.message}`, { errorCode: 422 });
      throw err;
    }
  };
}

/** Applies `terminalOnRefusal` to every activity of a wiring object. */
export function withActivityBoundary<T extends object>(activities: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(activities)) {
    out[name] = typeof value === 'function' ? terminalOnRefusal(value as (...args: unknown[]) => Promise<unknown>) : value;
  }
  return out as T;
}
