import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { Db, Sql } from '../../../services/shared/db.ts';
import { sha256 } from '../../../services/shared/crypto.ts';
import { DomainError } from '../../../services/shared/errors.ts';
import { API_KEYS_CHANNEL, findApiKeyByHash, type ApiKeyRecord } from '../../organizations/api-key-queries.ts';
import type { AuthContext } from '../context.ts';

const KEY_RE = /^sk_(live|test)_[0-9A-Za-z]{20,64}$/;

const unauthenticated = (why: string) => new DomainError('unauthenticated', why);

/**
 * Resolves `Authorization: Bearer sk_…` to an organisation and scopes.
 *
 * Keys are looked up by their SHA-256 and cached in memory, so an authenticated read costs one query, not two.
 * The cache is kept honest by PostgreSQL notifications (listenForKeyChanges): revoking a key (operator command) or
 * changing an organisation's plan notifies every API process, which drops the entry (or every entry) at once; a
 * reconnect of the listener clears the whole cache, and entries expire after AUTH_CACHE_TTL_MS in any case. With a
 * listener attached, cached entries are only used while the listener has shown, within the last 900 ms, that
 * notifications reach it (its own heartbeat came back): a listener that is cut off never lets a revoked key through for
 * longer than that, however long the cut lasts.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, { ctx: AuthContext; expires: number }>();
  private readonly ttlMs: number;
  /**
   * Bumped by every eviction. A lookup that started before a revocation must not cache what it read, or a
   * revoked key could live on for a TTL: `set` is skipped when the generation moved during the lookup.
   */
  private generation = 0;
  /**
   * With a listener: entries are used only before this moment (ms since the epoch), which each heartbeat that comes
   * back moves on. Undefined without a listener (tests, documents): entries count for their TTL.
   */
  private freshUntil: number | undefined;
  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  /** From now on cached entries count only while confirmFresh keeps them fresh (listenForKeyChanges calls it). */
  requireFreshness(): void {
    this.freshUntil ??= 0;
  }

  /** Every notification committed before the heartbeat has arrived: the cache may be used until `until`. */
  confirmFresh(until: number): void {
    this.freshUntil = Math.max(this.freshUntil ?? 0, until);
  }

  /** False while the listener has not shown recently that notifications reach it: every request then reads the key. */
  get fresh(): boolean {
    return this.freshUntil === undefined || Date.now() < this.freshUntil;
  }

  get(hashHex: string): AuthContext | undefined {
    if (!this.fresh) return undefined;
    const e = this.entries.get(hashHex);
    if (!e) return undefined;
    if (e.expires < Date.now()) {
      this.entries.delete(hashHex);
      return undefined;
    }
    return e.ctx;
  }

  get currentGeneration(): number {
    return this.generation;
  }

  set(hashHex: string, ctx: AuthContext, readAtGeneration: number): void {
    if (this.ttlMs === 0 || readAtGeneration !== this.generation) return;
    if (this.entries.size > 100_000) this.entries.clear();
    this.entries.set(hashHex, { ctx, expires: Date.now() + this.ttlMs });
  }

  evict(hashHex: string): void {
    this.generation++;
    this.entries.delete(hashHex);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}

export interface KeyChangeListenerOptions {
  /**
   * Opens the listener's own connection (one client of `max: 1`; postgres.js listens on a connection of its own
   * beside it, and the heartbeats go through the client). When heartbeats stop coming back for RELISTEN_AFTER_MS the
   * client is ended and a new one opened: postgres.js notices a connection that hangs without closing only when TCP
   * keep-alive gives up on it, and after a lost connection it reconnects with a back-off of up to 20 s; meanwhile the
   * cache is bypassed. Without it the pool's own client is used and never replaced (tests).
   */
  connect?: () => Sql;
  /** Default 250 ms. */
  heartbeatMs?: number;
  /** How long after a heartbeat was sent the cache may be used once it came back; default 900 ms. */
  freshMs?: number;
  /** Told when the listener is cut off (cached keys are then not used) and when it is back. */
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** Without a heartbeat back for this long, the listener's connection is replaced. */
const RELISTEN_AFTER_MS = 5000;

/**
 * Keeps `cache` honest across processes: drops a key on its revocation notice, every key on a plan change (an empty
 * payload) and on a reconnect of the listener. A heartbeat (`hb:<process>:<n>` on the same channel, every 250 ms)
 * proves that notifications arrive: PostgreSQL delivers notifications in commit order, so once a heartbeat sent at S
 * has come back, every revocation committed before S has been applied, and the cache is used until S + 900 ms. A
 * revoked key is therefore refused by every API process within 900 ms of the commit, whatever happens to the
 * listener's connection; while heartbeats do not come back, each request reads its key from PostgreSQL.
 */
export async function listenForKeyChanges(db: Db, cache: ApiKeyCache, opts: KeyChangeListenerOptions = {}): Promise<() => Promise<void>> {
  const heartbeatMs = opts.heartbeatMs ?? 250;
  const freshMs = opts.freshMs ?? 900;
  const me = `hb:${randomBytes(8).toString('hex')}:`;
  const sentAt = new Map<number, number>();
  let seq = 0;
  const startedAt = Date.now();
  let lastBack = startedAt;
  let everBack = false;
  let cutOff = false;
  const onNotice = (payload: string) => {
    if (payload.startsWith('hb:')) {
      if (!payload.startsWith(me)) return;
      const n = Number(payload.slice(me.length));
      const at = sentAt.get(n);
      if (at === undefined) return;
      for (const k of sentAt.keys()) if (k <= n) sentAt.delete(k);
      lastBack = Date.now();
      everBack = true;
      cache.confirmFresh(at + freshMs);
      if (cutOff) {
        cutOff = false;
        opts.log?.info({}, 'API key notifications arrive again: cached keys are used again');
      }
      return;
    }
    if (payload) cache.evict(payload);
    else cache.clear();
  };
  const subscribe = async (client: Sql) => client.listen(API_KEYS_CHANNEL, onNotice, () => cache.clear());

  cache.requireFreshness();
  let client = opts.connect ? opts.connect() : db.sql;
  let sub: { unlisten(): Promise<unknown> } | undefined = await subscribe(client).catch(async (err: unknown) => {
    if (opts.connect) await client.end({ timeout: 0 });
    throw err;
  });
  let replacing = false;
  let stopped = false;
  const replace = async () => {
    replacing = true;
    try {
      await client.end({ timeout: 0 }).catch(() => {});
      sub = undefined;
      if (stopped) return;
      client = opts.connect!();
      sub = await subscribe(client);
    } catch {
      // Tried again at the next heartbeat past RELISTEN_AFTER_MS.
    } finally {
      lastBack = Date.now();
      replacing = false;
    }
  };
  const timer = setInterval(() => {
    const now = Date.now();
    // The cache is bypassed from freshMs on (ApiKeyCache.fresh); said once the silence is long enough to act on.
    if (now - lastBack > RELISTEN_AFTER_MS) {
      // A start on a busy machine may wait a while for its first heartbeat: that is no cut to report.
      if (!cutOff && (everBack || now - startedAt > 10_000)) {
        cutOff = true;
        opts.log?.warn({}, 'API key notifications do not arrive: every request reads its key from PostgreSQL until they do');
      }
      if (opts.connect && !replacing) {
        void replace();
        return;
      }
    }
    const n = ++seq;
    sentAt.set(n, now);
    // Heartbeats that never came back are forgotten after a while.
    if (sentAt.size > 100) sentAt.delete(sentAt.keys().next().value!);
    client`SELECT pg_notify(${API_KEYS_CHANNEL}, ${me + n})`.catch(() => {});
  }, heartbeatMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    // A connection of its own is simply ended (whatever state it is in); on the pool's, the channel is left.
    if (opts.connect) await client.end({ timeout: 1 });
    else await sub?.unlisten();
  };
}

function toContext(rec: ApiKeyRecord): AuthContext {
  return { organizationId: rec.organizationId, keyId: rec.keyId, scopes: new Set(rec.scopes), sandbox: rec.sandbox, plan: rec.plan };
}

/**
 * The onRequest hook of every scoped route: authenticates, then checks the route's scope. Callback-style, so that a
 * key found in the cache (nearly every request) is answered synchronously, without a promise per request.
 */
export function createAuthenticate(
  db: Db,
  cache: ApiKeyCache,
): (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void {
  const admit = (req: FastifyRequest, ctx: AuthContext): DomainError | undefined => {
    req.auth = ctx;
    // The plan comes before the scope: before any other check but authentication (docs/api-conventions.md, "Order of
    // checks").
    const plan = req.routeOptions.config.plan;
    if (plan && ctx.plan !== plan) {
      return new DomainError('plan_required', `This operation needs the ${plan} plan, which the organisation does not have.`);
    }
    const scope = req.routeOptions.config.scope;
    if (scope && !ctx.scopes.has(scope)) {
      return new DomainError('insufficient_scope', `This operation requires the ${scope} scope, which the key does not hold.`, {
        details: [{ path: '', message: `required scope: ${scope}` }],
      });
    }
    return undefined;
  };
  return (req, _reply, done) => {
    const header = req.headers.authorization;
    if (!header) return done(unauthenticated('Send your API key as "Authorization: Bearer sk_…".'));
    const match = /^Bearer +(\S+)$/i.exec(header);
    if (!match) return done(unauthenticated('The Authorization header must read "Bearer <API key>".'));
    const key = match[1]!;
    if (!KEY_RE.test(key)) return done(unauthenticated('That is not a valid API key.'));
    const hashHex = sha256(key).toString('hex');
    const cached = cache.get(hashHex);
    if (cached) return done(admit(req, cached));
    const generation = cache.currentGeneration;
    db.read((sql) => findApiKeyByHash(sql, Buffer.from(hashHex, 'hex'))).then(
      (rec) => {
        if (!rec || rec.revoked) return done(unauthenticated('That API key is unknown or has been revoked.'));
        const ctx = toContext(rec);
        cache.set(hashHex, ctx, generation);
        done(admit(req, ctx));
      },
      (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
    );
  };
}
