import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../../services/shared/errors.ts';
import type { LimiterStore } from '../../../services/shared/limiter-store.ts';
import type { RateClass } from '../context.ts';

/**
 * Per-key token buckets, one per rate class: `default` refills at RATE_LIMIT_DEFAULT requests per second,
 * `document` (PDF downloads, runs) at RATE_LIMIT_DOCUMENT; each bucket holds twice its rate as burst.
 * A rate of 0 switches the class off. The buckets live in the limiter store (services/shared/limiter-store.ts): in
 * Redis when REDIS_URL is set, so a key gets its configured rate across all API replicas together; while Redis cannot
 * be reached, and without REDIS_URL, in each process (docs/operations.md, "Shared limits").
 */
export interface RateLimits {
  default: number;
  document: number;
}

export function createRateLimiter(limits: RateLimits, store: LimiterStore, now?: () => number) {
  return function rateLimit(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    const cls: RateClass = req.routeOptions.config.rateClass ?? 'default';
    const rate = limits[cls];
    if (rate === 0 || !req.auth) return done();
    const burst = rate * 2;
    store.take(`api:${req.auth.keyId}:${cls}`, { capacity: burst, amount: rate, periodMs: 1000 }, undefined, now?.()).then(
      ({ allowed, tokens }) => {
        const resetSeconds = Math.ceil((burst - tokens) / rate);
        reply.header('RateLimit-Limit', String(rate));
        // The bucket holds up to twice the rate (the burst); what is reported never exceeds the stated limit.
        reply.header('RateLimit-Remaining', String(Math.min(rate, Math.floor(tokens))));
        reply.header('RateLimit-Reset', String(resetSeconds));
        if (allowed) return done();
        const retryAfter = Math.max(1, Math.ceil((1 - tokens) / rate));
        done(
          new DomainError('rate_limited', `Too many requests for this key; retry after ${retryAfter} s.`, {
            headers: { 'Retry-After': String(retryAfter) },
          }),
        );
      },
      (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
    );
  };
}
