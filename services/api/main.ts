/**
 * `npm run start:api`: the HTTP API on HOST:PORT. Needs DATABASE_URL and DATA_ENCRYPTION_KEY (outside production,
 * the development key under DATA_DIR is used when the latter is unset). With RESTATE_INGRESS_URL set, /readyz also
 * requires Restate to answer and to know the workflows. `deploy/local/start.ts` runs `startApi` in its own process.
 */
import type { FastifyInstance } from 'fastify';
import { closeServer } from '../../services/shared/close-server.ts';
import { callableHost, metricsPort, payBaseUrl, readConfig, type Config } from '../../services/shared/config.ts';
import { createKeyring, type Keyring } from '../../services/shared/crypto.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { resolveMasterKey } from '../../services/shared/dev-secrets.ts';
import { buildApp } from './app.ts';
import { stopOnSignal } from '../../services/shared/stop-on-signal.ts';
import { createChromiumRenderer } from '../../activities/pdf/chromium-renderer.ts';
import { createDocumentStore } from '../documents/create-document-store.ts';
import { createBusinessClock } from '../clock/business-clock.ts';
import { createRestateWakeups } from '../clock/wakeups.ts';
import { replanDunning } from '../reminders/replan-dunning.ts';
import { createEngineClient } from '../../services/shared/engine-client.ts';
import { createRestateMailDispatch } from '../invoices/restate-mail-dispatch.ts';
import { createRestateReceiptDispatch } from '../payments/receipt-dispatch.ts';
import type { InvoiceMailDispatch } from '../invoices/send-invoice.ts';

/** Without a Restate ingress the API still takes sends (they stay queued) but cannot hand them on. */
const noMailEngine: InvoiceMailDispatch = {
  dispatch: () => Promise.reject(new Error('RESTATE_INGRESS_URL is not set: queued sends wait for the workflow engine')),
};
import { ApiKeyCache, listenForKeyChanges } from './plugins/auth.ts';
import { laterLog, openLimiterStore, type OpenLimiterStore } from '../../services/shared/limiter-store.ts';
import type { ReadinessProbe } from './routes/health.ts';
import { domainSettings } from '../domains/domain-settings.ts';
import { startMetricsListener, watchPool } from '../observability/metrics.ts';
import { startTracing } from '../observability/tracing.ts';

/** The service the workflows endpoint registers; Restate is ready for the API once it routes to it. */
const REQUIRED_RESTATE_SERVICE = 'Housekeeping';

export function restateReadinessProbe(ingressUrl: string): ReadinessProbe {
  return {
    name: 'restate',
    async check() {
      const res = await fetch(`${ingressUrl.replace(/\/+$/, '')}/restate/health`, { signal: AbortSignal.timeout(2000) });
      if (!res.ok) throw new Error(`restate ingress answered ${res.status}`);
      const body = (await res.json()) as { services?: unknown };
      if (!Array.isArray(body.services) || !body.services.includes(REQUIRED_RESTATE_SERVICE)) {
        throw new Error(`the workflows endpoint is not registered (no ${REQUIRED_RESTATE_SERVICE} service)`);
      }
    },
  };
}

export interface RunningApi {
  app: FastifyInstance;
  /** Base URL the API listens on, e.g. http://127.0.0.1:3000. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface StartApiOptions {
  /** Defaults to the key DATA_ENCRYPTION_KEY or the development key file names. */
  keyring?: Keyring;
  logStream?: NodeJS.WritableStream;
}

type ApiConfig = Pick<
  Config,
  | 'databaseUrl'
  | 'dbPoolMax'
  | 'host'
  | 'port'
  | 'encryptionKey'
  | 'nodeEnv'
  | 'dataDir'
  | 'restateIngressUrl'
  | 'rateLimitDefault'
  | 'rateLimitDocument'
  | 'authCacheTtlMs'
  | 'redisUrl'
  | 'logLevel'
  | 'mailFromAddress'
  | 'webhookAllowLoopback'
  | 'payBaseUrl'
  | 'payHost'
  | 'payPort'
  | 'publicApiUrl'
  | 'dnsServers'
  | 'portalCnameTarget'
  | 'portalBaseDomain'
  | 'otlpEndpoint'
  | 'otlpProtocol'
  | 'otelServiceName'
  | 'documentStore'
  | 's3Endpoint'
  | 's3Bucket'
  | 's3Region'
>;

export async function startApi(config: ApiConfig, opts: StartApiOptions = {}): Promise<RunningApi> {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required.');
  const keyring = opts.keyring ?? createKeyring(resolveMasterKey(config).key);
  const tracing = startTracing(config, 'faktura-api');
  const db = new Db(createSql(config.databaseUrl, { max: config.dbPoolMax }), config.dbPoolMax);
  const unwatchPool = watchPool('api', db);
  // The business clock reads through a pool of its own: use cases ask for "today" inside their transaction.
  const clockSql = createSql(config.databaseUrl, { max: 2 });
  // One warm browser per API process, started on the first render.
  const pdf = createChromiumRenderer();
  let app: FastifyInstance | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let limiter: OpenLimiterStore | undefined;
  try {
    // The rate-limit buckets: in Redis when REDIS_URL is set, so a key gets its rate across all replicas together.
    limiter = await openLimiterStore(config.redisUrl, laterLog(() => app?.log));
    const authCache = new ApiKeyCache(config.authCacheTtlMs);
    // Before the first request: a key revoked from now on must stop working at once, on every API process.
    unlisten = await listenForKeyChanges(db, authCache, {
      // A connection of its own (and postgres.js's listening one beside it), replaced when heartbeats stop coming back.
      connect: () => createSql(config.databaseUrl!, { max: 1 }),
      log: laterLog(() => app?.log),
    });
    app = await buildApp({
      db,
      keyring,
      pdf,
      documents: createDocumentStore(config),
      clock: createBusinessClock(clockSql),
      mailDispatch: config.restateIngressUrl ? createRestateMailDispatch(config.restateIngressUrl, db) : noMailEngine,
      mailDomain: config.mailFromAddress.split('@')[1]!,
      config,
      authCache,
      limiterStore: limiter.store,
      readiness: config.restateIngressUrl ? [restateReadinessProbe(config.restateIngressUrl)] : [],
      ...(config.restateIngressUrl ? { wakeups: createRestateWakeups(config.restateIngressUrl) } : {}),
      webhooks: { allowLoopback: config.webhookAllowLoopback },
      payBaseUrl: payBaseUrl(config),
      publicApiUrl: config.publicApiUrl,
      domains: domainSettings(config),
      ...(config.restateIngressUrl ? { receiptDispatch: createRestateReceiptDispatch(config.restateIngressUrl, db) } : {}),
      ...(config.restateIngressUrl ? { engine: createEngineClient(config.restateIngressUrl, db) } : {}),
      onReminderSettingsChanged: (org) => replanDunning(db, config.restateIngressUrl ? createRestateWakeups(config.restateIngressUrl) : undefined, org),
      ...(opts.logStream ? { logStream: opts.logStream } : {}),
      tracing,
    });
    if (!config.redisUrl && (config.rateLimitDefault > 0 || config.rateLimitDocument > 0)) {
      app.log.info('REDIS_URL is not set: rate limits count in this process (with several API processes, each gives a key its full rate)');
    }
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app?.close();
    await limiter?.close();
    await unlisten?.();
    await pdf.close();
    unwatchPool();
    await db.close();
    await clockSql.end({ timeout: 5 });
    await tracing.shutdown();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // A wildcard address is not one a client can call; name the loopback address instead.
  const host = callableHost(config.host);
  const running = app;
  const stopListening = unlisten;
  const limiterStore = limiter;
  let closing: Promise<void> | undefined;
  return {
    app: running,
    url: `http://${host}:${port}`,
    port,
    close() {
      // Stop taking requests and let those in flight finish (within a grace period), then release the database.
      closing ??= (async () => {
        await closeServer(running);
        // The listener's connection may be gone already (a Ctrl-C in a terminal reaches PostgreSQL too); there is
        // then nothing left to unlisten.
        await stopListening().catch(() => {});
        await limiterStore.close();
        await pdf.close();
        unwatchPool();
        await db.close();
        await clockSql.end({ timeout: 5 });
        // The spans of the last requests go out before the process ends.
        await tracing.shutdown();
      })();
      return closing;
    },
  };
}

async function main(): Promise<void> {
  const config = readConfig();
  // Checked before the key: a wrong invocation must not leave a development key behind.
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required.');
  const master = resolveMasterKey(config);
  if (master.source === 'development-file') {
    process.stderr.write(`Using the development encryption key in ${master.path}; set DATA_ENCRYPTION_KEY in production.\n`);
  }
  // The metrics listener first: a port taken stops the start before anything else runs.
  const metrics = await startMetricsListener(config.metricsHost, metricsPort(config, 'api'));
  const api = await startApi(config, { keyring: createKeyring(master.key) }).catch(async (err: unknown) => {
    await metrics.close();
    throw err;
  });
  api.app.log.info({ url: metrics.url }, 'metrics listening');
  stopOnSignal(
    async () => {
      await api.close();
      await metrics.close();
    },
    (event, detail) => (event === 'stopping' ? api.app.log.info({ signal: detail }, 'stopping') : process.stderr.write(`error while stopping: ${detail}\n`)),
  );
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
