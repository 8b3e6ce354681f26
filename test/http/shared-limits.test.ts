import assert from 'node:assert/strict';
import * as net from 'node:net';
import { randomBytes } from 'node:crypto';
import { call, createTestOrg, startTestApp, testDb, type TestApp } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';
import { startTestRedis, testLimiterStore } from '../helpers/redis.ts';
import { ApiKeyCache, listenForKeyChanges } from '../../services/api/plugins/auth.ts';
import { revokeApiKey } from '../../services/organizations/revoke-api-key.ts';
import { updateOrganization } from '../../services/organizations/update-organization.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import {
  createLimiterRedis, MemoryLimiterStore, RedisLimiterStore, redisReady, SharedLimiterStore, type BucketSpec, type LimiterLog,
} from '../../services/shared/limiter-store.ts';
import type { RunningRedis } from '../../deploy/local/redis-server.ts';

/**
 * Replicas change nothing for what the contract counts per key or per client (docs/operations.md, "Shared limits"):
 * two API apps (or two pay apps) on one database and one Redis count against the same buckets, a revoked key or a
 * plan change reaches both within a second, and while Redis is gone each replica still limits on its own.
 */

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const prefix = () => `test:${randomBytes(6).toString('hex')}:`;

function captureLog(): LimiterLog & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (_o, msg) => void lines.push(`warn ${msg}`), info: (_o, msg) => void lines.push(`info ${msg}`) };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(20);
  }
}

describe('shared limits across replicas', () => {
  describe('the Redis store and the in-process store', () => {
    it('give the same answers to the same sequence of takes, gated takes and drains', async () => {
      const redis = await testLimiterStore();
      const memory = new MemoryLimiterStore();
      const a: BucketSpec = { capacity: 10, amount: 5, periodMs: 1000 };
      const gate: BucketSpec = { capacity: 3, amount: 3, periodMs: 60_000 };
      let seed = 7;
      const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
      let t = 5_000;
      for (let i = 0; i < 300; i++) {
        t += Math.floor(rand() * 400);
        const key = rand() < 0.5 ? 'x' : 'y';
        const op = rand();
        if (op < 0.2) {
          await redis.drain('g', gate, t);
          await memory.drain('g', gate, t);
        } else {
          const g = op < 0.6 ? { key: 'g', bucket: gate } : undefined;
          assert.deepEqual(await redis.take(key, a, g, t), await memory.take(key, a, g, t), `step ${i}`);
        }
      }
    });

    it('a bucket missing in Redis is a full one, and the key expires once the bucket would be full again (at least a minute)', async () => {
      const keyPrefix = prefix();
      const store = await testLimiterStore(keyPrefix);
      const spec: BucketSpec = { capacity: 4, amount: 1, periodMs: 60_000 };
      assert.equal(await store.client.exists(`${keyPrefix}k`), 0);
      assert.deepEqual(await store.take('k', spec), { allowed: true, tokens: 3, gateTokens: undefined });
      const ttl = await store.client.pttl(`${keyPrefix}k`);
      assert.ok(ttl > 59_000 && ttl <= 60_000, `ttl ${ttl}`);
      for (let i = 0; i < 3; i++) await store.take('k', spec);
      const full = await store.client.pttl(`${keyPrefix}k`);
      assert.ok(full > 239_000 && full <= 240_000, `an empty bucket of 4 at 1 a minute is full in 4 minutes: ${full}`);
    });
  });

  describe('API rate limits', () => {
    let a: TestApp;
    let b: TestApp;
    before(async () => {
      // Two replicas: their own apps, one database, one Redis (the same key prefix, as every process of a deployment).
      const shared = prefix();
      const config = { rateLimitDefault: 5, rateLimitDocument: 1 };
      a = await startTestApp({ limiterStore: await testLimiterStore(shared), rateLimitClock: () => 1_000_000 }, config);
      b = await startTestApp({ limiterStore: await testLimiterStore(shared), rateLimitClock: () => 1_000_000 }, config);
    });
    after(async () => {
      await a.close();
      await b.close();
    });

    it('a key gets its configured rate across both replicas together: a burst of 10, then 429 on either', async () => {
      const org = await createTestOrg();
      const statuses: number[] = [];
      const remaining: number[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await call(i % 2 === 0 ? a.app : b.app, 'GET', '/v1/customers?limit=1', { key: org.apiKey });
        statuses.push(res.status);
        remaining.push(Number(res.headers['ratelimit-remaining']));
        if (res.status === 429) {
          assert.equal(res.body.error.code, 'rate_limited');
          assert.equal(res.headers['retry-after'], '1');
          assert.equal(res.headers['ratelimit-limit'], '5');
        }
      }
      assert.deepEqual(statuses, [...Array(10).fill(200), 429, 429]);
      assert.deepEqual(remaining, [5, 5, 5, 5, 5, 4, 3, 2, 1, 0, 0, 0]);
      // Another organisation's key is untouched on both.
      const other = await createTestOrg();
      assert.equal((await call(b.app, 'GET', '/v1/customers?limit=1', { key: other.apiKey })).status, 200);
    });

    it('replicas with buckets of their own (no shared store) would have let 20 through', async () => {
      const config = { rateLimitDefault: 5, rateLimitDocument: 1 };
      const c = await startTestApp({ limiterStore: new MemoryLimiterStore(), rateLimitClock: () => 1_000_000 }, config);
      const d = await startTestApp({ limiterStore: new MemoryLimiterStore(), rateLimitClock: () => 1_000_000 }, config);
      try {
        const org = await createTestOrg();
        let ok = 0;
        for (let i = 0; i < 22; i++) if ((await call(i % 2 === 0 ? c.app : d.app, 'GET', '/v1/customers?limit=1', { key: org.apiKey })).status === 200) ok++;
        assert.equal(ok, 20);
      } finally {
        await c.close();
        await d.close();
      }
    });
  });

  describe('pay page look-up limits', () => {
    let a: TestPay;
    let b: TestPay;
    let now = 0;
    before(async () => {
      const shared = prefix();
      const opts = { trustProxy: true, limiterClock: () => now, lookupLimits: { perClientPerMinute: 10, missesPerMinute: 15 } };
      a = await startTestPay({ ...opts, limiterStore: await testLimiterStore(shared) });
      b = await startTestPay({ ...opts, limiterStore: await testLimiterStore(shared) });
    });
    after(async () => {
      await a.close();
      await b.close();
    });
    const lookUp = (app: TestPay, client: string, code = 'ZZZZ-ZZZ0') =>
      app.app.inject({ method: 'POST', url: '/code', headers: { ...FORM, 'x-forwarded-for': client }, payload: `code=${code}` });

    it('one address gets 10 look-ups a minute across both replicas, and all addresses share one budget of misses', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await lookUp(i % 2 === 0 ? a : b, '10.1.0.1')).statusCode);
      assert.deepEqual(statuses, [...Array(10).fill(404), 429]);
      const blocked = await lookUp(b, '10.1.0.1');
      assert.equal(blocked.statusCode, 429);
      assert.equal(blocked.headers['retry-after'], '6');
      // 10 misses spent of 15: five more from other addresses, spread over both replicas, and then nobody.
      for (let i = 0; i < 5; i++) assert.equal((await lookUp(i % 2 === 0 ? b : a, `10.2.0.${i}`)).statusCode, 404);
      const stopped = await lookUp(a, '10.3.0.1');
      assert.equal(stopped.statusCode, 429);
      assert.equal(stopped.headers['retry-after'], '4');
      now += 4000;
      assert.equal((await lookUp(b, '10.3.0.1')).statusCode, 404);
    });
  });

  describe('when Redis is unreachable', () => {
    let server: RunningRedis;
    let port: number;
    before(async () => {
      server = await startTestRedis();
      port = server.port;
    });
    after(() => server.stop());

    /** A replica's store as the services run it: shared, with the process's buckets while Redis is gone. */
    function replicaStore(keyPrefix: string) {
      const log = captureLog();
      const client = createLimiterRedis(`redis://127.0.0.1:${port}`);
      const store = new SharedLimiterStore(new RedisLimiterStore(client, { keyPrefix }), log, { retryAfterMs: 200 });
      return { store, log, client };
    }

    it('the API answers and still limits each key in each replica; the shared buckets count again once Redis is back', async () => {
      const shared = prefix();
      const ra = replicaStore(shared);
      const rb = replicaStore(shared);
      await redisReady(ra.client);
      await redisReady(rb.client);
      const config = { rateLimitDefault: 5, rateLimitDocument: 1 };
      const a = await startTestApp({ limiterStore: ra.store, rateLimitClock: () => 1_000_000 }, config);
      const b = await startTestApp({ limiterStore: rb.store, rateLimitClock: () => 1_000_000 }, config);
      const org = await createTestOrg();
      const get = (t: TestApp) => call(t.app, 'GET', '/v1/customers?limit=1', { key: org.apiKey });
      try {
        for (let i = 0; i < 4; i++) assert.equal((await get(i % 2 ? a : b)).status, 200);
        assert.equal(ra.store.stats().fallback + rb.store.stats().fallback, 0);

        await server.stop();
        // Each replica now counts on its own: a full burst of 10 in each, then 429, never an unlimited key.
        for (const t of [a, b]) {
          const statuses: number[] = [];
          for (let i = 0; i < 11; i++) statuses.push((await get(t)).status);
          assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
        }
        assert.equal(ra.store.stats().fallback, 11);
        assert.equal(rb.store.stats().fallback, 11);
        assert.ok(ra.log.lines.some((l) => l.startsWith('warn the shared limiter store (Redis) cannot be reached')), ra.log.lines.join('\n'));

        server = await startTestRedis(port);
        await redisReady(ra.client, 5000);
        await redisReady(rb.client, 5000);
        await sleep(250);
        // A restarted Redis holds no buckets: the key starts full again, and both replicas count against it together.
        const statuses: number[] = [];
        for (let i = 0; i < 11; i++) statuses.push((await get(i % 2 ? a : b)).status);
        assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
        assert.ok(ra.log.lines.some((l) => l.startsWith('info the shared limiter store (Redis) answers again')), ra.log.lines.join('\n'));
      } finally {
        await a.close();
        await b.close();
        ra.client.disconnect();
        rb.client.disconnect();
      }
    });

    it('the pay page still answers look-ups and still limits them in each replica', async () => {
      const r = replicaStore(prefix());
      await redisReady(r.client);
      const now = 0;
      const pay = await startTestPay({ trustProxy: true, limiterClock: () => now, lookupLimits: { perClientPerMinute: 3, missesPerMinute: 100 }, limiterStore: r.store });
      const lookUp = (client: string) => pay.app.inject({ method: 'POST', url: '/code', headers: { ...FORM, 'x-forwarded-for': client }, payload: 'code=ZZZZ-ZZZ0' });
      try {
        assert.equal((await lookUp('10.9.0.1')).statusCode, 404);
        await server.stop();
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) statuses.push((await lookUp('10.9.0.2')).statusCode);
        assert.deepEqual(statuses, [404, 404, 404, 429]);
        assert.ok(r.store.stats().fallback >= 4);
      } finally {
        server = await startTestRedis(port);
        await pay.close();
        r.client.disconnect();
      }
    });

    it('a server that stops answering costs one command timeout, then the process decides on its own until it answers', async () => {
      const r = replicaStore(prefix());
      await redisReady(r.client);
      const spec: BucketSpec = { capacity: 10, amount: 5, periodMs: 1000 };
      await r.store.take('k', spec);
      process.kill(server.pid, 'SIGSTOP');
      try {
        const t0 = performance.now();
        const first = await r.store.take('k', spec);
        const firstMs = performance.now() - t0;
        assert.equal(first.allowed, true);
        assert.ok(firstMs >= 200 && firstMs < 1000, `the first decision waits for the command timeout: ${firstMs} ms`);
        const t1 = performance.now();
        for (let i = 0; i < 20; i++) await r.store.take('k', spec);
        assert.ok(performance.now() - t1 < 100, 'the next ones do not wait');
        assert.equal(r.store.stats().errors, 1);
      } finally {
        process.kill(server.pid, 'SIGCONT');
        r.client.disconnect();
      }
    });
  });

  describe('key and plan caches', () => {
    /** A TCP hop to PostgreSQL that a test can cut and restore: the listener of one replica goes through it. */
    async function pgHop(): Promise<{ url: string; cut(): void; restore(): Promise<void>; close(): Promise<void> }> {
      const target = new URL(process.env.TEST_DATABASE_URL!);
      const sockets = new Set<net.Socket>();
      let server: net.Server;
      let port = 0;
      const open = () =>
        new Promise<void>((done) => {
          server = net.createServer((c) => {
            const u = net.connect(Number(target.port || 5432), target.hostname);
            for (const s of [c, u]) {
              sockets.add(s);
              s.on('error', () => {});
              s.on('close', () => {
                sockets.delete(s);
                c.destroy();
                u.destroy();
              });
            }
            c.pipe(u);
            u.pipe(c);
          });
          server.listen(port, '127.0.0.1', () => {
            port = (server.address() as net.AddressInfo).port;
            done();
          });
        });
      await open();
      const url = new URL(target);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      const cut = () => {
        server.close();
        for (const s of sockets) s.destroy();
      };
      return { url: url.toString(), cut, restore: open, close: async () => cut() };
    }

    interface Replica {
      app: TestApp;
      cache: ApiKeyCache;
      db: Db;
      stop(): Promise<void>;
    }

    /** An API replica: its own pool, key cache and listener (on its own connection), on the run's database. */
    async function replica(listenUrl = process.env.TEST_DATABASE_URL!): Promise<Replica> {
      const db = new Db(createSql(process.env.TEST_DATABASE_URL!, { max: 3 }), 3);
      const cache = new ApiKeyCache(30_000);
      const stopListening = await listenForKeyChanges(db, cache, { connect: () => createSql(listenUrl, { max: 1 }) });
      const app = await startTestApp({ db, authCache: cache });
      await until('the listener is confirmed', () => cache.fresh);
      return {
        app, cache, db,
        async stop() {
          await app.close();
          await stopListening();
          await db.close();
        },
      };
    }

    let replicas: Replica[] = [];
    afterEach(async () => {
      await Promise.all(replicas.map((r) => r.stop()));
      replicas = [];
    });

    /** Milliseconds from `change` (committed) until every replica answers `status` for the request. */
    async function seenByAll(change: () => Promise<unknown>, req: { url: string; key: string }, status: number): Promise<number> {
      await change();
      const t0 = performance.now();
      await until(`every replica answers ${status}`, async () => {
        const res = await Promise.all(replicas.map((r) => call(r.app.app, 'GET', req.url, { key: req.key })));
        return res.every((x) => x.status === status);
      }, 3000);
      return performance.now() - t0;
    }

    it('a revoked key is refused by every replica within a second @cluster', async () => {
      replicas = [await replica(), await replica()];
      const org = await createTestOrg();
      for (const r of replicas) assert.equal((await call(r.app.app, 'GET', '/v1/customers?limit=1', { key: org.apiKey })).status, 200);
      const ms = await seenByAll(() => testDb().db.tx((tx) => revokeApiKey(tx, org.keyId)), { url: '/v1/customers?limit=1', key: org.apiKey }, 401);
      assert.ok(ms < 1000, `${ms} ms`);
    });

    it('a plan change is seen by every replica within a second, both ways @cluster', async () => {
      replicas = [await replica(), await replica()];
      const org = await createTestOrg();
      const req = { url: '/v1/reminder-flows', key: org.apiKey };
      for (const r of replicas) assert.equal((await call(r.app.app, 'GET', req.url, { key: org.apiKey })).body.error.code, 'plan_required');
      const up = await seenByAll(() => testDb().db.tx((tx) => updateOrganization(tx, org.organizationId, { plan: 'pro' })), req, 200);
      assert.ok(up < 1000, `${up} ms`);
      const down = await seenByAll(() => testDb().db.tx((tx) => updateOrganization(tx, org.organizationId, { plan: 'standard' })), req, 403);
      assert.ok(down < 1000, `${down} ms`);
    });

    it('a replica whose listener is cut off stops trusting its cache, so a revocation it never hears of still counts within a second; it listens again once it can', async () => {
      const hop = await pgHop();
      try {
        replicas = [await replica(hop.url), await replica()];
        const [cutOff] = replicas as [Replica, Replica];
        const org = await createTestOrg();
        for (const r of replicas) assert.equal((await call(r.app.app, 'GET', '/v1/customers?limit=1', { key: org.apiKey })).status, 200);
        hop.cut();
        // postgres.js keeps trying to listen again, with a growing back-off; meanwhile the replica reads every key.
        const ms = await seenByAll(() => testDb().db.tx((tx) => revokeApiKey(tx, org.keyId)), { url: '/v1/customers?limit=1', key: org.apiKey }, 401);
        assert.ok(ms < 1000, `${ms} ms`);
        assert.equal(cutOff.cache.fresh, false);
        await hop.restore();
        // The listener's connection is replaced (after 5 s without a heartbeat back) and the cache is used again.
        await until('the cut-off replica listens again', () => cutOff.cache.fresh, 15_000);
        const again = await createTestOrg();
        assert.equal((await call(cutOff.app.app, 'GET', '/v1/customers?limit=1', { key: again.apiKey })).status, 200);
        const ms2 = await seenByAll(() => testDb().db.tx((tx) => revokeApiKey(tx, again.keyId)), { url: '/v1/customers?limit=1', key: again.apiKey }, 401);
        assert.ok(ms2 < 1000, `${ms2} ms`);
      } finally {
        await hop.close();
      }
    });
  });
});
