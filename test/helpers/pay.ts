import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { freePort } from '../../deploy/local/ports.ts';
import { buildPayApp, type PayDeps } from '../../services/pay/app.ts';
import { createTestProvider, type TestProvider } from '../../services/payments/providers/test-provider.ts';
import { realClock } from '../../services/shared/clock.ts';
import { testDb } from './context.ts';
import { testLimiterStore } from './redis.ts';
import { clusterTarget, isInProcessOnly, NotOnCluster, remoteApp, replicaLogs, type ClusterTarget } from './cluster-target.ts';
import { testProviderSecret } from '../../services/pay/main.ts';

export interface TestPay {
  app: FastifyInstance;
  provider: TestProvider;
  /** The test provider's shared secret (callbacks signed with anything else are forged). */
  secret: Buffer;
  baseUrl: string;
  logs(): string;
  close(): Promise<void>;
}

/**
 * The pay service on the run's database, with the test provider. `listen: true` serves it on a loopback port (for a
 * browser, and for the provider's callbacks, which travel over HTTP); otherwise tests call it with inject().
 */
export async function startTestPay(opts: { listen?: boolean } & Partial<Omit<PayDeps, 'db' | 'provider' | 'providerRoutes'>> = {}): Promise<TestPay> {
  const cluster = clusterTarget();
  if (cluster) return clusterPay(cluster, opts);
  const { db } = testDb();
  const port = opts.listen ? await freePort() : 0;
  const baseUrl = opts.payBaseUrl ?? (opts.listen ? `http://127.0.0.1:${port}` : 'http://pay.test');
  const secret = Buffer.alloc(32, 9);
  let logged = '';
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logged += chunk.toString();
      cb();
    },
  });
  const provider = createTestProvider({ secret, baseUrl: `${baseUrl}/test-provider`, retryDelaysMs: [200, 500] });
  const { listen: _listen, ...rest } = opts;
  const app = await buildPayApp({
    db,
    clock: realClock,
    logLevel: 'info',
    logStream,
    // The look-up limits count in the run's real Redis, in buckets of this app's own unless the test passes a store.
    limiterStore: rest.limiterStore ?? (await testLimiterStore()),
    ...rest,
    payBaseUrl: baseUrl,
    provider: provider.provider,
    providerRoutes: provider.routes,
  });
  if (opts.listen) await app.listen({ host: '127.0.0.1', port });
  return {
    app,
    provider,
    secret,
    baseUrl,
    logs: () => logged,
    async close() {
      provider.close();
      await app.close();
    },
  };
}

/**
 * The cluster's pay service behind its proxy (TEST_TARGET=cluster): the test provider runs in the pay replicas, with
 * the secret they derive from the master key, under the cluster's pay address (a `payBaseUrl` asked for is not
 * it). `portal` is accepted (the cluster serves the portal with its own key and engine); any other override is
 * refused by name.
 */
function clusterPay(cluster: ClusterTarget, opts: { listen?: boolean } & Partial<Omit<PayDeps, 'db' | 'provider' | 'providerRoutes'>>): TestPay {
  const { keyring } = testDb();
  if (isInProcessOnly(opts)) opts = {};
  for (const k of Object.keys(opts)) {
    if (k === 'listen' || k === 'portal' || k === 'payBaseUrl') continue;
    throw new NotOnCluster(`the pay override ${k}`);
  }
  const logs = replicaLogs('pay');
  const callbacks = () => (logs().match(/"url":"\/callbacks\/test"/g) ?? []).length;
  const provider = {
    get provider(): never {
      throw new NotOnCluster('pay.provider.provider');
    },
    get routes(): never {
      throw new NotOnCluster('pay.provider.routes');
    },
    /** The provider's deliveries run in the replicas: idle once no callback has arrived for a second (at most 20 s). */
    async idle() {
      const deadline = Date.now() + 20_000;
      let seen = callbacks();
      let quietSince = Date.now();
      while (Date.now() - quietSince < 1000 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        const now = callbacks();
        if (now !== seen) [seen, quietSince] = [now, Date.now()];
      }
    },
    close() {},
  } as TestProvider;
  return { app: remoteApp(cluster.payUrl, 'pay'), provider, secret: testProviderSecret(keyring), baseUrl: cluster.payUrl, logs, close: async () => {} };
}
