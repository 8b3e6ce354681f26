import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { startRedis, type RunningRedis } from '../../deploy/local/redis-server.ts';
import { createLimiterRedis, RedisLimiterStore, redisReady } from '../../services/shared/limiter-store.ts';

/**
 * A redis-server of its own in a temp directory, removed on stop: the run's shared limiter store (started once by the
 * root hooks, TEST_REDIS_URL) and the servers a test stops and starts again to see what the services do without one.
 */
export async function startTestRedis(port?: number): Promise<RunningRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'faktura-test-redis-'));
  let server: RunningRedis;
  try {
    server = await startRedis({ dataDir: dir, ...(port ? { port } : {}) });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...server,
    async stop(timeoutMs?: number) {
      try {
        await server.stop(timeoutMs);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export function testRedisUrl(): string {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error('TEST_REDIS_URL is not set: run the tests through mocha (npm test)');
  return url;
}

let client: Redis | undefined;

/** One connection to the run's Redis for every test app, closed by the root hook. */
async function testRedisClient(): Promise<Redis> {
  client ??= createLimiterRedis(testRedisUrl());
  if (!(await redisReady(client, 5000))) throw new Error('the test run\'s Redis does not answer');
  return client;
}

export function closeTestRedisClient(): void {
  client?.disconnect();
  client = undefined;
}

/**
 * The limiter store of a test app: the run's real Redis, under a key prefix of its own (each app starts with full
 * buckets, as a fresh in-process limiter did), or under `keyPrefix` when two apps are to share their buckets as
 * replicas do. Errors are not hidden by a fallback: a test that needs Redis fails when it is gone.
 */
export async function testLimiterStore(keyPrefix = `test:${randomBytes(6).toString('hex')}:`): Promise<RedisLimiterStore> {
  return new RedisLimiterStore(await testRedisClient(), { keyPrefix });
}
