import { MemoryLimiterStore, type BucketSpec, type LimiterStore } from '../shared/limiter-store.ts';

/**
 * Rate limits on payment-code look-ups, which is what keeps a 40-bit code safe against guessing.
 *
 * Two token buckets: one per client address (a person mistyping a code a few times is never stopped; a script is
 * after a handful of tries), and one for the whole service that only misses drain (a guessing run spread over many
 * addresses is slowed for everyone, while people with right codes are not counted against it). With the defaults a
 * single address gets at most 10 tries a minute, and all addresses together at most 300 misses a minute: finding
 * any one of a million live codes then takes on the order of a month of continuous guessing.
 *
 * The buckets live in the limiter store (services/shared/limiter-store.ts): in Redis when REDIS_URL is set, so the
 * budgets hold for all pay replicas together; while Redis cannot be reached, each replica counts on its own (N
 * replicas then allow up to N times the budget: docs/operations.md, "When Redis is unreachable").
 */
export interface LookupLimits {
  /** Look-ups per client address: burst, and refill per minute. */
  perClientPerMinute: number;
  /** Misses across all clients per minute (burst the same). */
  missesPerMinute: number;
}

export const DEFAULT_LOOKUP_LIMITS: LookupLimits = { perClientPerMinute: 10, missesPerMinute: 300 };

const MISSES_KEY = 'lookup:misses';

export class LookupLimiter {
  private readonly client: BucketSpec;
  private readonly misses: BucketSpec;
  private readonly now: (() => number) | undefined;
  private readonly store: LimiterStore;

  /** `now` (milliseconds) is for tests that control time; otherwise the store's clock counts. */
  constructor(limits: LookupLimits = DEFAULT_LOOKUP_LIMITS, now?: () => number, store: LimiterStore = new MemoryLimiterStore()) {
    this.client = { capacity: limits.perClientPerMinute, amount: limits.perClientPerMinute, periodMs: 60_000 };
    this.misses = { capacity: limits.missesPerMinute, amount: limits.missesPerMinute, periodMs: 60_000 };
    this.now = now;
    this.store = store;
  }

  /** Takes one look-up for the client; returns the seconds to wait when none is left (then nothing is looked up). */
  async take(client: string): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }> {
    const r = await this.store.take(`lookup:client:${client}`, this.client, { key: MISSES_KEY, bucket: this.misses }, this.now?.());
    if (r.allowed) return { allowed: true };
    const wait = (tokens: number, spec: BucketSpec) => Math.ceil(((1 - tokens) / spec.amount) * 60);
    // The shared budget first: while it is spent, no client's own tokens help.
    if (r.gateTokens !== undefined && r.gateTokens < 1) return { allowed: false, retryAfterSeconds: wait(r.gateTokens, this.misses) };
    return { allowed: false, retryAfterSeconds: wait(r.tokens, this.client) };
  }

  /** A look-up that found nothing also drains the shared bucket. */
  async miss(): Promise<void> {
    await this.store.drain(MISSES_KEY, this.misses, this.now?.());
  }
}
