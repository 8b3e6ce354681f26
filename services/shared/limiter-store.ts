import { Redis } from 'ioredis';

/**
 * Token buckets for every limit the contract counts per key or per client (docs/operations.md, "Shared limits"):
 * the API's rate limits per key and rate class (services/api/plugins/rate-limit.ts) and the pay page's look-up limits
 * (services/pay/lookup-limiter.ts). With REDIS_URL set they live in Redis, so N replicas together give a key its
 * configured rate, not N times it; without it, in the process.
 *
 * A bucket holds at most `capacity` tokens and refills `amount` of them every `periodMs`, continuously
 * (tokens + (elapsed / periodMs) × amount, capped). A bucket that has never been seen, or that has been forgotten, is
 * full: a missing bucket and a full one mean the same, which is what lets idle buckets expire.
 *
 * The Redis store runs one Lua script per decision (atomic: two replicas never spend the same token) on the server's
 * clock (TIME), so replicas on different machines agree on elapsed time; the in-process store runs the same arithmetic
 * in the same order, so both give the same answers to the same sequence (test/unit/limiter-store.test.ts).
 */
export interface BucketSpec {
  capacity: number;
  amount: number;
  periodMs: number;
}

export interface TakeResult {
  /** A token was taken. */
  allowed: boolean;
  /** The bucket's tokens after the decision (a fraction while it refills). */
  tokens: number;
  /** The gate's tokens (refilled, never spent here), when a gate was named. */
  gateTokens: number | undefined;
}

export interface LimiterStore {
  /**
   * Refills the bucket and takes one token when it holds one. With a gate, the gate is refilled too and must hold a
   * token as well, or nothing is taken; the gate itself is never spent by `take` (only by `drain`).
   * `now` (milliseconds) is for tests that control time; otherwise the store's own clock counts.
   */
  take(key: string, bucket: BucketSpec, gate?: { key: string; bucket: BucketSpec }, now?: number): Promise<TakeResult>;
  /** Refills the bucket, then spends one token if it has any (never below 0). */
  drain(key: string, bucket: BucketSpec, now?: number): Promise<void>;
}

interface Bucket {
  tokens: number;
  last: number;
}

/** Buckets that have been full for a while are forgotten: in the process by a sweep, in Redis by the key's expiry. */
const FORGET_AFTER_MS = 60_000;

/** One bucket's state in the process. Exactly the arithmetic of the Lua script below. */
function refill(b: Bucket | undefined, spec: BucketSpec, t: number): Bucket {
  if (!b) return { tokens: spec.capacity, last: t };
  return { tokens: Math.min(spec.capacity, b.tokens + (Math.max(0, t - b.last) / spec.periodMs) * spec.amount), last: t };
}

/** The buckets of one process: exact for one replica, N times the limit for N. Also what a shared store falls back to. */
export class MemoryLimiterStore implements LimiterStore {
  private readonly buckets = new Map<string, { b: Bucket; spec: BucketSpec }>();
  private readonly clock: () => number;
  private sweepAt: number | undefined;

  constructor(clock: () => number = () => performance.now()) {
    this.clock = clock;
  }

  private sweep(t: number): void {
    this.sweepAt ??= t + FORGET_AFTER_MS;
    if (t <= this.sweepAt && this.buckets.size <= 100_000) return;
    // Full buckets say nothing: forgetting them costs no protection and idle keys cost no memory.
    for (const [k, { b, spec }] of this.buckets) if (refill(b, spec, t).tokens >= spec.capacity) this.buckets.delete(k);
    this.sweepAt = t + FORGET_AFTER_MS;
  }

  private update(key: string, spec: BucketSpec, t: number): Bucket {
    const b = refill(this.buckets.get(key)?.b, spec, t);
    this.buckets.set(key, { b, spec });
    return b;
  }

  take(key: string, bucket: BucketSpec, gate?: { key: string; bucket: BucketSpec }, now?: number): Promise<TakeResult> {
    const t = now ?? this.clock();
    this.sweep(t);
    const b = this.update(key, bucket, t);
    const g = gate ? this.update(gate.key, gate.bucket, t) : undefined;
    const allowed = b.tokens >= 1 && (!g || g.tokens >= 1);
    if (allowed) b.tokens -= 1;
    return Promise.resolve({ allowed, tokens: b.tokens, gateTokens: g?.tokens });
  }

  drain(key: string, bucket: BucketSpec, now?: number): Promise<void> {
    const t = now ?? this.clock();
    this.sweep(t);
    const b = this.update(key, bucket, t);
    b.tokens = Math.max(0, b.tokens - 1);
    return Promise.resolve();
  }
}

/**
 * KEYS[1] the bucket, KEYS[2] the gate (optional). ARGV: mode (`take` or `drain`), now in ms (empty: the server's
 * TIME), then capacity, amount, period of the bucket, then of the gate. Each bucket is a hash {tokens, last}, written
 * with 17 significant digits (a double survives the round trip), expiring once it would be full again (at least a
 * minute, as the in-process sweep). Returns {allowed 0/1, tokens, gate tokens or ''} as strings: Redis would cut a
 * Lua number to an integer.
 */
const BUCKET_SCRIPT = `
local t
if ARGV[2] ~= '' then
  t = tonumber(ARGV[2])
else
  local now = redis.call('TIME')
  t = tonumber(now[1]) * 1000 + tonumber(now[2]) / 1000
end
local function refill(key, capacity, amount, period)
  local s = redis.call('HMGET', key, 'tokens', 'last')
  if not s[1] then return capacity end
  return math.min(capacity, tonumber(s[1]) + (math.max(0, t - tonumber(s[2])) / period) * amount)
end
local function save(key, tokens, capacity, amount, period)
  redis.call('HSET', key, 'tokens', string.format('%.17g', tokens), 'last', string.format('%.17g', t))
  redis.call('PEXPIRE', key, string.format('%d', math.max(${FORGET_AFTER_MS}, math.ceil(((capacity - tokens) / amount) * period))))
end
local capacity, amount, period = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local tokens = refill(KEYS[1], capacity, amount, period)
if ARGV[1] == 'drain' then
  save(KEYS[1], math.max(0, tokens - 1), capacity, amount, period)
  return {0, '', ''}
end
local gate = ''
local allowed = tokens >= 1
if KEYS[2] then
  local gc, ga, gp = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
  local g = refill(KEYS[2], gc, ga, gp)
  save(KEYS[2], g, gc, ga, gp)
  gate = string.format('%.17g', g)
  allowed = allowed and g >= 1
end
if allowed then tokens = tokens - 1 end
save(KEYS[1], tokens, capacity, amount, period)
return {allowed and 1 or 0, string.format('%.17g', tokens), gate}
`;

type BucketCommand = (numKeys: number, ...args: (string | number)[]) => Promise<[number, string, string]>;

/**
 * A client for the limiter: while Redis cannot be reached a command fails at once (no offline queue, no retries), and
 * one that gets no answer fails after `commandTimeoutMs`; the connection is re-established in the background.
 */
export function createLimiterRedis(url: string, opts: { commandTimeoutMs?: number } = {}): Redis {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: opts.commandTimeoutMs ?? 250,
    connectTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 100, 1000),
    // The process names itself to the server (CLIENT LIST), as it does to PostgreSQL.
    connectionName: 'faktura',
  });
  // Errors are answered per command (SharedLimiterStore); without a listener ioredis would print each reconnect attempt.
  client.on('error', () => {});
  return client;
}

/** Buckets in Redis, under `keyPrefix`. Every command's error reaches the caller: SharedLimiterStore decides what then. */
export class RedisLimiterStore implements LimiterStore {
  readonly client: Redis;
  private readonly prefix: string;
  private readonly run: BucketCommand;

  constructor(client: Redis, opts: { keyPrefix?: string } = {}) {
    this.client = client;
    this.prefix = opts.keyPrefix ?? 'faktura:limits:';
    // EVALSHA, with EVAL once when the server does not know the script yet (a fresh or restarted server).
    if (!('fakturaBucket' in client)) client.defineCommand('fakturaBucket', { lua: BUCKET_SCRIPT });
    const command = (client as unknown as { fakturaBucket: BucketCommand }).fakturaBucket;
    this.run = command.bind(client);
  }

  async take(key: string, bucket: BucketSpec, gate?: { key: string; bucket: BucketSpec }, now?: number): Promise<TakeResult> {
    const at = now === undefined ? '' : String(now);
    const spec = [bucket.capacity, bucket.amount, bucket.periodMs];
    const [allowed, tokens, gateTokens] = gate
      ? await this.run(2, this.prefix + key, this.prefix + gate.key, 'take', at, ...spec, gate.bucket.capacity, gate.bucket.amount, gate.bucket.periodMs)
      : await this.run(1, this.prefix + key, 'take', at, ...spec);
    return { allowed: allowed === 1, tokens: Number(tokens), gateTokens: gateTokens === '' ? undefined : Number(gateTokens) };
  }

  async drain(key: string, bucket: BucketSpec, now?: number): Promise<void> {
    await this.run(1, this.prefix + key, 'drain', now === undefined ? '' : String(now), bucket.capacity, bucket.amount, bucket.periodMs);
  }
}

export interface LimiterLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** The log of an app built after the store: until it exists, lines go to stderr. */
export function laterLog(log: () => LimiterLog | undefined): LimiterLog {
  const early = (msg: string) => void process.stderr.write(`${msg}\n`);
  return {
    warn: (obj, msg) => (log() ? log()!.warn(obj, msg) : early(msg)),
    info: (obj, msg) => (log() ? log()!.info(obj, msg) : early(msg)),
  };
}

export interface LimiterStoreStats {
  /** Decisions taken by the shared store. */
  shared: number;
  /** Decisions taken in the process because Redis could not be reached: the counter to alert on when it grows. */
  fallback: number;
  /** Redis commands that failed (refused, timed out, or an error answer). */
  errors: number;
}

/**
 * The store the services run with: the Redis one, and while Redis cannot be reached the process's own buckets
 * (docs/operations.md, "When Redis is unreachable"). A failed command sends decisions to the process for the next
 * second without trying Redis (a hung server costs one timeout a second, not one per request); the first decision
 * after that tries Redis again. The switch each way is logged once; `stats()` counts both kinds of decision.
 */
export class SharedLimiterStore implements LimiterStore {
  readonly redis: RedisLimiterStore;
  private readonly local: MemoryLimiterStore;
  private readonly log: LimiterLog;
  private readonly retryAfterMs: number;
  private downUntil = 0;
  private down = false;
  private readonly counts: LimiterStoreStats = { shared: 0, fallback: 0, errors: 0 };

  constructor(redis: RedisLimiterStore, log: LimiterLog, opts: { retryAfterMs?: number; local?: MemoryLimiterStore } = {}) {
    this.redis = redis;
    this.log = log;
    this.retryAfterMs = opts.retryAfterMs ?? 1000;
    this.local = opts.local ?? new MemoryLimiterStore();
  }

  stats(): LimiterStoreStats {
    return { ...this.counts };
  }

  private useShared(): boolean {
    // Not connected (yet, or any more): no command is sent, ioredis would refuse it at once anyway.
    return this.redis.client.status === 'ready' && Date.now() >= this.downUntil;
  }

  private failed(err: unknown): void {
    this.counts.errors++;
    this.downUntil = Date.now() + this.retryAfterMs;
    if (!this.down) {
      this.down = true;
      this.log.warn({ err }, 'the shared limiter store (Redis) cannot be reached: limits count per process until it is back');
    }
  }

  private async decide<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.useShared()) {
      try {
        const result = await shared();
        this.counts.shared++;
        if (this.down) {
          this.down = false;
          this.log.info({}, 'the shared limiter store (Redis) answers again: limits count across replicas');
        }
        return result;
      } catch (err) {
        this.failed(err);
      }
    } else if (!this.down) {
      this.failed(new Error(`Redis connection is ${this.redis.client.status}`));
    }
    this.counts.fallback++;
    return local();
  }

  take(key: string, bucket: BucketSpec, gate?: { key: string; bucket: BucketSpec }, now?: number): Promise<TakeResult> {
    return this.decide(() => this.redis.take(key, bucket, gate, now), () => this.local.take(key, bucket, gate, now));
  }

  drain(key: string, bucket: BucketSpec, now?: number): Promise<void> {
    return this.decide(() => this.redis.drain(key, bucket, now), () => this.local.drain(key, bucket, now));
  }
}

/** Resolves once the client is connected, or after `timeoutMs` (the store falls back meanwhile); never rejects. */
export function redisReady(client: Redis, timeoutMs = 2000): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('ready', onReady);
  });
}

export interface OpenLimiterStore {
  store: LimiterStore;
  /** The Redis-backed store with its counters; undefined without REDIS_URL. */
  shared: SharedLimiterStore | undefined;
  close(): Promise<void>;
}

/**
 * The store a service process runs with: shared in Redis when `redisUrl` (REDIS_URL) is set, the process's own
 * otherwise. Waits up to 2 s for the first connection; a server that is not up by then does not stop the start (its
 * limits count per process until it answers, as at any later outage). The URL is never logged: it may hold a password.
 */
export async function openLimiterStore(redisUrl: string | undefined, log: LimiterLog): Promise<OpenLimiterStore> {
  if (!redisUrl) return { store: new MemoryLimiterStore(), shared: undefined, close: () => Promise.resolve() };
  const client = createLimiterRedis(redisUrl);
  const shared = new SharedLimiterStore(new RedisLimiterStore(client), log);
  if (!(await redisReady(client))) {
    log.warn({}, 'the shared limiter store (Redis at REDIS_URL) does not answer yet: limits count per process until it does');
  }
  return {
    store: shared,
    shared,
    close: () => {
      client.disconnect();
      return Promise.resolve();
    },
  };
}
