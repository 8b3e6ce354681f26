/**
 * `npm run start:pay`: the hosted pay page on PAY_HOST:PAY_PORT (default 127.0.0.1:3001). Needs DATABASE_URL and the
 * encryption key (the test provider's secret is derived from it). With RESTATE_INGRESS_URL set, payments booked by
 * provider callbacks hand their receipts to the workflow engine at once. `deploy/local/start.ts` runs `startPay` in
 * its own process.
 */
import type { FastifyInstance } from 'fastify';
import { closeServer } from '../shared/close-server.ts';
import * as net from 'node:net';
import { callableHost, DEFAULT_PAY_PORT, metricsPort, payBaseUrl, readConfig, type Config } from '../shared/config.ts';
import type { Clock } from '../shared/clock.ts';
import { createBusinessClock } from '../clock/business-clock.ts';
import { createKeyring, type Keyring } from '../shared/crypto.ts';
import { createSql, Db } from '../shared/db.ts';
import { resolveMasterKey } from '../shared/dev-secrets.ts';
import { stopOnSignal } from '../shared/stop-on-signal.ts';
import { createRestateReceiptDispatch } from '../payments/receipt-dispatch.ts';
import { createTestProvider } from '../payments/providers/test-provider.ts';
import { buildPayApp } from './app.ts';
import { createDocumentStore } from '../documents/create-document-store.ts';
import { createEngineClient } from '../shared/engine-client.ts';
import { laterLog, openLimiterStore, type OpenLimiterStore } from '../shared/limiter-store.ts';
import { startMetricsListener, watchPool } from '../observability/metrics.ts';
import { startTracing } from '../observability/tracing.ts';

export interface RunningPay {
  app: FastifyInstance;
  /** The address it listens on, e.g. http://127.0.0.1:3001. */
  url: string;
  /** The public base of payment links (PAY_BASE_URL, else `url`). */
  baseUrl: string;
  port: number;
  close(): Promise<void>;
}

export interface StartPayOptions {
  keyring?: Keyring;
  logStream?: NodeJS.WritableStream;
  clock?: Clock;
}

type PayConfig = Pick<
  Config,
  | 'databaseUrl'
  | 'dbPoolMax'
  | 'payHost'
  | 'payPort'
  | 'payBaseUrl'
  | 'payTrustProxy'
  | 'restateIngressUrl'
  | 'logLevel'
  | 'encryptionKey'
  | 'nodeEnv'
  | 'dataDir'
  | 'portalBaseDomain'
  | 'redisUrl'
  | 'otlpEndpoint'
  | 'otlpProtocol'
  | 'otelServiceName'
  | 'documentStore'
  | 's3Endpoint'
  | 's3Bucket'
  | 's3Region'
>;

/** A port the kernel has free right now (PAY_PORT=0): the base URL must name it before the server is built. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The provider's secret, derived from the master key: stable across restarts, never stored. */
export const testProviderSecret = (keyring: Keyring): Buffer => keyring.mac('payment-provider:test:callback-secret');

export async function startPay(config: PayConfig, opts: StartPayOptions = {}): Promise<RunningPay> {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required.');
  const keyring = opts.keyring ?? createKeyring(resolveMasterKey(config).key);
  let port = config.payPort ?? DEFAULT_PAY_PORT;
  if (port === 0) port = await freePort(config.payHost);
  const host = config.payHost;
  const shownHost = callableHost(host);
  const url = `http://${shownHost}:${port}`;
  const baseUrl = payBaseUrl({ ...config, payPort: port });
  const poolMax = Math.min(config.dbPoolMax, 5);
  const db = new Db(createSql(config.databaseUrl, { max: poolMax }), poolMax);
  const unwatchPool = watchPool('pay', db);
  // Payments are dated the organisation's today (a sandbox's test clock included), read through a pool of its own.
  const clockSql = opts.clock ? undefined : createSql(config.databaseUrl, { max: 2 });
  let app: FastifyInstance | undefined;
  let limiter: OpenLimiterStore | undefined;
  const tracing = startTracing(config, 'faktura-pay');
  const provider = createTestProvider({ secret: testProviderSecret(keyring), baseUrl: `${baseUrl}/test-provider` });
  try {
    // The look-up buckets: in Redis when REDIS_URL is set, so the budgets hold for all pay replicas together.
    limiter = await openLimiterStore(config.redisUrl, laterLog(() => app?.log));
    const built = await buildPayApp({
      db,
      clock: opts.clock ?? createBusinessClock(clockSql!),
      provider: provider.provider,
      providerRoutes: provider.routes,
      payBaseUrl: baseUrl,
      ...(config.restateIngressUrl ? { receiptDispatch: createRestateReceiptDispatch(config.restateIngressUrl, db) } : {}),
      logLevel: config.logLevel,
      trustProxy: config.payTrustProxy,
      limiterStore: limiter.store,
      tracing,
      ...(opts.logStream ? { logStream: opts.logStream } : {}),
      // The customer portal (docs/customer-portal.md); its sign-in mails go through the workflows.
      portal: {
        keyring,
        baseDomain: config.portalBaseDomain,
        documents: createDocumentStore(config),
        ...(config.restateIngressUrl ? { engine: createEngineClient(config.restateIngressUrl, db) } : {}),
      },
    });
    app = built;
    if (!config.redisUrl) built.log.info('REDIS_URL is not set: payment-code look-up limits count in this process (with several pay processes, each allows the full budget)');
    await built.listen({ host, port });
  } catch (err) {
    provider.close();
    await app?.close();
    await limiter?.close();
    unwatchPool();
    await db.close();
    await clockSql?.end({ timeout: 5 });
    await tracing.shutdown();
    throw err;
  }
  const running = app;
  const limiterStore = limiter;
  let closing: Promise<void> | undefined;
  return {
    app: running,
    url,
    baseUrl,
    port,
    close() {
      closing ??= (async () => {
        provider.close();
        await closeServer(running);
        await limiterStore.close();
        unwatchPool();
        await db.close();
        await clockSql?.end({ timeout: 5 });
        await tracing.shutdown();
      })();
      return closing;
    },
  };
}

async function main(): Promise<void> {
  const config = readConfig();
  // The metrics listener first: a port taken stops the start before anything else runs.
  const metrics = await startMetricsListener(config.metricsHost, metricsPort(config, 'pay'));
  const pay = await startPay(config).catch(async (err: unknown) => {
    await metrics.close();
    throw err;
  });
  pay.app.log.info({ url: pay.url, baseUrl: pay.baseUrl, metricsUrl: metrics.url }, 'pay page listening');
  stopOnSignal(
    async () => {
      await pay.close();
      await metrics.close();
    },
    (event, detail) => (event === 'stopping' ? pay.app.log.info({ signal: detail }, 'stopping') : process.stderr.write(`error while stopping: ${detail}\n`)),
  );
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
