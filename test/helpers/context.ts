import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppDeps } from '../../services/api/app.ts';
import { createKeyring, type Keyring } from '../../services/shared/crypto.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { createOrganization, type CreateOrganizationInput } from '../../services/organizations/create-organization.ts';
import { createApiKey } from '../../services/organizations/create-api-key.ts';
import type { Scope } from '../../contracts/scopes.ts';
import { createChromiumRenderer, type ChromiumRenderer } from '../../activities/pdf/chromium-renderer.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { createBusinessClock, type BusinessClock } from '../../services/clock/business-clock.ts';
import { testLimiterStore } from './redis.ts';
import { clusterTarget, inProcessOnly, isInProcessOnly, NotOnCluster, remoteApp, replicaLogs, type ClusterTarget } from './cluster-target.ts';

/** The master key the tests encrypt with (never used outside tests). */
export const TEST_MASTER_KEY = Buffer.alloc(32, 7);

let shared: { db: Db; keyring: Keyring } | undefined;
let clock: BusinessClock | undefined;

/** The organisations' business clocks (test clocks of sandbox organisations), on a pool of their own like the app's. */
export function testClock(): BusinessClock {
  if (!clock) {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through mocha (npm test)');
    clock = createBusinessClock(createSql(url, { max: 2 }));
  }
  return clock;
}
let renderer: ChromiumRenderer | undefined;

/** One warm Chromium for the whole run (launched on the first render), closed by the root hook. */
export function testRenderer(): ChromiumRenderer {
  renderer ??= createChromiumRenderer({ poolSize: 2 });
  return renderer;
}

export async function closeTestRenderer(): Promise<void> {
  await renderer?.close();
  renderer = undefined;
}

/** One pool for the whole run, on the run's fresh database. */
export function testDb(): { db: Db; keyring: Keyring } {
  if (!shared) {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through mocha (npm test)');
    shared = { db: new Db(createSql(url, { max: 10 }), 10), keyring: createKeyring(TEST_MASTER_KEY) };
  }
  return shared;
}

export interface TestApp {
  app: FastifyInstance;
  deps: AppDeps;
  /** Everything the app logged, as one string. */
  logs(): string;
  close(): Promise<void>;
}

/**
 * The app under test: built in this process on the run's database, or, with TEST_TARGET=cluster, the API of a running
 * `npm run start:cluster` reached through its proxy (test/helpers/cluster-target.ts). Against the cluster only
 * overrides that say what the cluster already does are accepted; any other is refused by name.
 */
export async function startTestApp(overrides: Partial<AppDeps> = {}, config: Partial<AppDeps['config']> = {}): Promise<TestApp> {
  const cluster = clusterTarget();
  if (cluster) return clusterApp(cluster, overrides, config);
  const { db, keyring } = testDb();
  let logged = '';
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logged += chunk.toString();
      cb();
    },
  });
  const deps: AppDeps = {
    db,
    keyring,
    pdf: testRenderer(),
    documents: createPostgresDocumentStore(),
    clock: testClock(),
    // No workflow engine in these tests: a send stays queued. Tests that follow the mail run the real engine.
    mailDispatch: { dispatch: () => Promise.reject(new Error('no workflow engine in this test')) },
    mailDomain: 'faktura.invalid',
    config: { rateLimitDefault: 0, rateLimitDocument: 0, authCacheTtlMs: 30_000, logLevel: 'info', ...config },
    logStream,
    // The rate limits count in the run's real Redis, as in production; each app has buckets of its own unless a test
    // passes one store to two apps.
    limiterStore: overrides.limiterStore ?? (await testLimiterStore()),
    ...overrides,
  };
  const app = await buildApp(deps);
  return { app, deps, logs: () => logged, close: () => app.close() };
}

/** Overrides only some tests of a file rely on: dropped against a running cluster (cluster-target.ts, inProcessOnly). */
function inProcessOnlyOverrides(overrides: Partial<AppDeps>): Partial<AppDeps>;
function inProcessOnlyOverrides<T extends object>(overrides: T): T;
function inProcessOnlyOverrides(overrides: object): object {
  return inProcessOnly(overrides);
}
export { inProcessOnlyOverrides as inProcessOnly };

function clusterApp(cluster: ClusterTarget, overrides: Partial<AppDeps>, config: Partial<AppDeps['config']>): TestApp {
  if (isInProcessOnly(overrides)) overrides = {};
  const { db, keyring } = testDb();
  const env = cluster.env;
  const clusterConfig: AppDeps['config'] = {
    rateLimitDefault: Number(env.RATE_LIMIT_DEFAULT ?? 100),
    rateLimitDocument: Number(env.RATE_LIMIT_DOCUMENT ?? 10),
    authCacheTtlMs: Number(env.AUTH_CACHE_TTL_MS ?? 30_000),
    logLevel: env.LOG_LEVEL ?? 'info',
  };
  // The settings a test asks for explicitly must be the cluster's (test/cluster/run.ts starts it with the tests' own).
  for (const [k, v] of Object.entries(config)) {
    if (clusterConfig[k as keyof AppDeps['config']] !== v) throw new NotOnCluster(`config ${k} = ${JSON.stringify(v)} (the cluster runs with ${JSON.stringify(clusterConfig[k as keyof AppDeps['config']])})`);
  }
  for (const [k, v] of Object.entries(overrides)) {
    const same =
      // Links then name the cluster's pay address: a test that checks the address itself is not in the sample.
      k === 'payBaseUrl' ||
      // A replica's own pool and key cache: every process of the cluster has its own.
      k === 'db' ||
      k === 'authCache' ||
      (k === 'publicApiUrl' && v === cluster.apiUrl) ||
      (k === 'webhooks' && !(v as AppDeps['webhooks'])?.resolve && (v as AppDeps['webhooks'])?.allowLoopback === (env.WEBHOOK_ALLOW_LOOPBACK === 'true'));
    if (!same) throw new NotOnCluster(`the override ${k}`);
  }
  const deps: AppDeps = {
    db,
    keyring,
    pdf: testRenderer(),
    documents: createPostgresDocumentStore(),
    clock: testClock(),
    mailDispatch: { dispatch: () => Promise.reject(new NotOnCluster('deps.mailDispatch (the cluster dispatches to its engine)')) },
    mailDomain: 'faktura.invalid',
    config: clusterConfig,
    payBaseUrl: cluster.payUrl,
    publicApiUrl: cluster.apiUrl,
  };
  return { app: remoteApp(cluster.apiUrl, 'api'), deps, logs: replicaLogs('api'), close: async () => {} };
}

export interface TestOrg {
  organizationId: string;
  apiKey: string;
  keyId: string;
}

let orgCounter = 0;

export async function createTestOrg(input: Partial<CreateOrganizationInput> = {}): Promise<TestOrg> {
  const { db } = testDb();
  const org = await db.tx((tx) =>
    // With the seller details every invoice and credit note must show (issuing refuses without them).
    createOrganization(tx, {
      name: `Test Org ${++orgCounter}`, cvr: '12345678', street: 'Testvej 1', postalCode: '8000', city: 'Aarhus C', sandbox: true, ...input,
    }),
  );
  return { organizationId: org.organizationId, apiKey: org.apiKey, keyId: org.keyId };
}

export async function createTestKey(org: TestOrg, scopes: Scope[]): Promise<string> {
  const { db } = testDb();
  const key = await db.tx((tx) => createApiKey(tx, org.organizationId, true, scopes));
  return key.apiKey;
}

let idemCounter = 0;
export const newIdempotencyKey = (): string => `test-key-${process.pid}-${Date.now()}-${++idemCounter}`;

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  idempotencyKey?: string | null;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: LightMyRequestResponse['headers'];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  raw: string;
}

/** Calls the app (in-process, or through the cluster's proxy with TEST_TARGET=cluster). Mutating calls get a fresh Idempotency-Key unless one is given (or null for none). */
export async function call(app: FastifyInstance, method: string, url: string, opts: CallOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const mutating = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method.toUpperCase());
  if (mutating && opts.idempotencyKey !== null) headers['idempotency-key'] = opts.idempotencyKey ?? newIdempotencyKey();
  const inject: InjectOptions = { method: method, url, headers };
  if (opts.body !== undefined) {
    inject.payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await app.inject(inject);
  let body: unknown = undefined;
  if (res.body) {
    try {
      body = JSON.parse(res.body);
    } catch {
      body = res.body;
    }
  }
  return { status: res.statusCode, headers: res.headers, body, raw: res.body };
}
