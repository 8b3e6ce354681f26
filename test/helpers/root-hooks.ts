/**
 * Test-run setup: one fresh PostgreSQL database per run, migrated once.
 * With DATABASE_URL set, the database is created on that server; otherwise an embedded PostgreSQL is started in
 * a temporary directory. TEST_DATABASE_URL tells the tests where it is.
 * And one redis-server on a free loopback port, the limiter store of every test app (TEST_REDIS_URL).
 * Against a running cluster (TEST_TARGET=cluster, npm run test:cluster) the database is the cluster's, neither
 * created nor dropped here, and the apps are the cluster's, with its own Redis.
 */
import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { startEmbeddedPostgres, type EmbeddedPg } from '../../deploy/local/embedded-postgres.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { createSql } from '../../services/shared/db.ts';
import { migrate } from '../../services/db/migrate.ts';
import { closeTestRenderer } from './context.ts';
import { closeTestRedisClient, startTestRedis } from './redis.ts';
import type { RunningRedis } from '../../deploy/local/redis-server.ts';
import { clusterTarget } from './cluster-target.ts';

let embedded: EmbeddedPg | undefined;
let redis: RunningRedis | undefined;
let tempDir: string | undefined;
let adminUrl: string;
let dbName: string;

export async function mochaGlobalSetup(): Promise<void> {
  // Against a running cluster (npm run test:cluster) the tests write to the cluster's own database.
  const cluster = clusterTarget();
  if (cluster) {
    process.env.TEST_DATABASE_URL = cluster.runtime.databaseUrl;
    return;
  }
  redis = await startTestRedis();
  process.env.TEST_REDIS_URL = redis.url;
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    tempDir = mkdtempSync(join(tmpdir(), 'faktura-test-pg-'));
    chmodSync(tempDir, 0o755);
    embedded = await startEmbeddedPostgres(join(tempDir, 'data'), await freePort());
    adminUrl = embedded.adminUrl;
  }
  dbName = `faktura_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  process.env.TEST_DATABASE_URL = url.toString();
  const sql = createSql(process.env.TEST_DATABASE_URL, { max: 1 });
  await migrate(sql);
  await sql.end();
}

/** Root hooks run in the test process (global setup/teardown may not share its modules' state). */
export const mochaHooks = {
  async afterAll(): Promise<void> {
    await closeTestRenderer();
    closeTestRedisClient();
  },
};

export async function mochaGlobalTeardown(): Promise<void> {
  if (clusterTarget()) return;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
  if (embedded) await embedded.stop();
  await redis?.stop();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
}
