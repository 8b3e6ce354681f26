/**
 * Rate limits on payment-code look-ups, which is what keeps a 40-bit code safe against guessing.
 *
 * Two token buckets: one per client address (a person mistyping a code a few times is never stopped; a script is
 * after a handful of tries), and one for the whole process that only misses drain (a guessing run spread over many
 * addresses is slowed for everyone, while people with right codes are not counted against it). With the defaults a
 * single address gets at most 10 tries a minute, and all addresses together at most 300 misses a minute: finding
 * any one of a million live codes then takes on the order of a month of continuous guessing.
 */
export interface LookupLimits {
  /** Look-ups per client address: burst, and refill per minute. */
  perClientPerMinute: number;
  /** Misses across all clients per minute (burst the same). */
  missesPerMinute: number;
}

export const DEFAULT_LOOKUP_LIMITS: LookupLimits = { perClientPerMinute: 10, missesPerMinute: 300 };

interface Bucket {
  tokens: number;
  last: number;
}

export class LookupLimiter {
  private readonly clients = new Map<string, Bucket>();
  private readonly misses: Bucket;
  private readonly limits: LookupLimits;
  private readonly now: () => number;

  constructor(limits: LookupLimits = DEFAULT_LOOKUP_LIMITS, now: () => number = () => performance.now()) {
    this.limits = limits;
    this.now = now;
    this.misses = { tokens: limits.missesPerMinute, last: now() };
  }

  private refill(b: Bucket, perMinute: number, t: number): void {
    b.tokens = Math.min(perMinute, b.tokens + ((t - b.last) / 60_000) * perMinute);
    b.last = t;
  }

  /** Takes one look-up for the client; returns the seconds to wait when none is left (then nothing is looked up). */
  take(client: string): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    const t = this.now();
    const perMinute = this.limits.perClientPerMinute;
    if (this.clients.size > 100_000) {
      // Full buckets say nothing: dropping them costs no protection.
      for (const [k, b] of this.clients) {
        this.refill(b, perMinute, t);
        if (b.tokens >= perMinute) this.clients.delete(k);
      }
    }
    let b = this.clients.get(client);
    if (!b) {
      b = { tokens: perMinute, last: t };
      this.clients.set(client, b);
    } else {
      this.refill(b, perMinute, t);
    }
    this.refill(this.misses, this.limits.missesPerMinute, t);
    if (this.misses.tokens < 1) return { allowed: false, retryAfterSeconds: Math.ceil(((1 - this.misses.tokens) / this.limits.missesPerMinute) * 60) };
    if (b.tokens < 1) return { allowed: false, retryAfterSeconds: Math.ceil(((1 - b.tokens) / perMinute) * 60) };
    b.tokens -= 1;
    return { allowed: true };
  }

  /** A look-up that found nothing also drains the shared bucket. */
  miss(): void {
    this.refill(this.misses, this.limits.missesPerMinute, this.now());
    this.misses.tokens = Math.max(0, this.misses.tokens - 1);
  }
}
