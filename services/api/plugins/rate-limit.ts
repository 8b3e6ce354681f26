import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../shared/errors.ts';
import type { RateClass } from '../context.ts';

/**
 * Per-key token buckets, one per rate class: `default` refills at RATE_LIMIT_DEFAULT requests per second,
 * `document` (PDF downloads, runs) at RATE_LIMIT_DOCUMENT; each bucket holds twice its rate as burst.
 * A rate of 0 switches the class off. Buckets live in the process, so with N API replicas a key gets N times the
 * rate; put a shared limiter at the edge when that matters.
 */
export interface RateLimits {
  default: number;
  document: number;
}

interface Bucket {
  tokens: number;
  last: number;
}

export function createRateLimiter(limits: RateLimits, now: () => number = () => performance.now()) {
  const buckets = new Map<string, Bucket>();
  let sweepAt = now() + 60_000;

  return function rateLimit(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    const cls: RateClass = req.routeOptions.config.rateClass ?? 'default';
    const rate = limits[cls];
    if (rate === 0 || !req.auth) return done();
    const burst = rate * 2;
    const t = now();
    if (t > sweepAt) {
      // Forget buckets that have been full for a while, so idle keys cost no memory.
      for (const [k, b] of buckets) if (b.tokens + ((t - b.last) / 1000) * rate >= burst) buckets.delete(k);
      sweepAt = t + 60_000;
    }
    const id = `${req.auth.keyId}:${cls}`;
    let b = buckets.get(id);
    if (!b) {
      b = { tokens: burst, last: t };
      buckets.set(id, b);
    } else {
      b.tokens = Math.min(burst, b.tokens + ((t - b.last) / 1000) * rate);
      b.last = t;
    }
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    const resetSeconds = Math.ceil((burst - b.tokens) / rate);
    reply.header('RateLimit-Limit', String(rate));
    // The bucket holds up to twice the rate (the burst); what is reported never exceeds the stated limit.
    reply.header('RateLimit-Remaining', String(Math.min(rate, Math.floor(b.tokens))));
    reply.header('RateLimit-Reset', String(resetSeconds));
    if (allowed) return done();
    const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / rate));
    done(
      new DomainError('rate_limited', `Too many requests for this key; retry after ${retryAfter} s.`, {
        headers: { 'Retry-After': String(retryAfter) },
      }),
    );
  };
}
