import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../shared/db.ts';
import { sha256 } from '../../shared/crypto.ts';
import { DomainError } from '../../shared/errors.ts';
import { API_KEYS_CHANNEL, findApiKeyByHash, type ApiKeyRecord } from '../../organizations/api-key-queries.ts';
import type { AuthContext } from '../context.ts';

const KEY_RE = /^sk_(live|test)_[0-9A-Za-z]{20,64}$/;

const unauthenticated = (why: string) => new DomainError('unauthenticated', why);

/**
 * Resolves `Authorization: Bearer sk_…` to an organisation and scopes.
 *
 * Keys are looked up by their SHA-256 and cached in memory, so an authenticated read costs one query, not two.
 * The cache is kept honest by PostgreSQL notifications: revoking a key (operator command) notifies every API
 * process, which drops the entry at once; a reconnect of the listener clears the whole cache, and entries expire
 * after AUTH_CACHE_TTL_MS in any case.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, { ctx: AuthContext; expires: number }>();
  private readonly ttlMs: number;
  /**
   * Bumped by every eviction. A lookup that started before a revocation must not cache what it read, or a
   * revoked key could live on for a TTL: `set` is skipped when the generation moved during the lookup.
   */
  private generation = 0;
  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  get(hashHex: string): AuthContext | undefined {
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

export async function listenForKeyChanges(db: Db, cache: ApiKeyCache): Promise<() => Promise<void>> {
  const sub = await db.sql.listen(
    API_KEYS_CHANNEL,
    (payload) => (payload ? cache.evict(payload) : cache.clear()),
    () => cache.clear(),
  );
  return () => sub.unlisten();
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
