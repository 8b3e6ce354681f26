/**
 * `npm run start:workflows`: the workflows process. It serves workflows/ to Restate (endpoint.ts), registers itself
 * and starts the housekeeping loop when RESTATE_ADMIN_URL is set (registration.ts), with the activities of
 * activities.ts, and relays committed events to the engine. `deploy/local/start.ts` runs the same functions in its
 * own process.
 *
 * Needs DATABASE_URL (the activities write to PostgreSQL). Nothing here sweeps on a timer: lost hand-offs, overdue
 * wake-ups and past-due announcements are the housekeeping loop's, a durable object on the engine.
 */
import { createMailer } from '../activities/mail/create-mailer.ts';
import { createChromiumRenderer } from '../activities/pdf/chromium-renderer.ts';
import { createBusinessClock as createPostgresBusinessClock } from '../services/clock/business-clock.ts';
import { listenForEarlierWakes } from '../services/clock/wakeups.ts';
import { restateOpenInvocations } from '../services/clock/engine-invocations.ts';
import type { PdfRenderer } from '../services/documents/pdf-renderer.ts';
import { startEventRelay, type RunningRelay } from '../services/events/event-relay.ts';
import { createRestateEventForwarder } from '../services/events/restate-event-forwarder.ts';
import type { Mailer } from '../services/mail/mail-port.ts';
import { metricsPort, payBaseUrl, readConfig, type Config } from '../services/shared/config.ts';
import { createKeyring, type Keyring } from '../services/shared/crypto.ts';
import { createSql, Db } from '../services/shared/db.ts';
import { resolveMasterKey } from '../services/shared/dev-secrets.ts';
import { stopOnSignal } from '../services/shared/stop-on-signal.ts';
import { startMetricsListener, watchPool, watchWakeIndex } from '../services/observability/metrics.ts';
import { startTracing } from '../services/observability/tracing.ts';
import { createActivities, restateWebhookHandOff } from './activities.ts';
import { createJsonLog, startWorkflowsEndpoint, type WorkflowsEndpoint } from './endpoint.ts';
import { registerDeployment, startHousekeeping, type Registration } from './registration.ts';

export { createActivities, restateWebhookHandOff, type ActivityResources } from './activities.ts';
export { createJsonLog, startWorkflowsEndpoint, type EndpointOptions, type LogLine, type WorkflowsEndpoint } from './endpoint.ts';
export { registerDeployment, startHousekeeping, workflowsSourceHash, type Registration } from './registration.ts';

// ---------------------------------------------------------------------------------------------------------------
// The whole entry point, reusable in-process

export interface RunningWorkflows {
  endpoint: WorkflowsEndpoint;
  registration: Registration | undefined;
  close(): Promise<void>;
}

export interface RunWorkflowsOptions {
  logStream?: NodeJS.WritableStream;
  /** Defaults to the key DATA_ENCRYPTION_KEY or the development key file names. */
  keyring?: Keyring;
  /** Defaults to SMTP_URL's server, else .eml files under DATA_DIR/mail. */
  mailer?: Mailer;
  /** Defaults to a Chromium renderer of its own, closed with the endpoint. */
  pdf?: PdfRenderer;
}

type WorkflowsConfig = Pick<
  Config,
  | 'databaseUrl'
  | 'dbPoolMax'
  | 'workflowsHost'
  | 'workflowsPort'
  | 'workflowsUrl'
  | 'restateIdentityKeys'
  | 'restateAdminUrl'
  | 'restateIngressUrl'
  | 'idempotencyRetentionDays'
  | 'logLevel'
  | 'mailFromAddress'
  | 'publicApiUrl'
  | 'smtpUrl'
  | 'dataDir'
  | 'encryptionKey'
  | 'nodeEnv'
  | 'webhookAllowLoopback'
  | 'letterApiUrl'
  | 'letterApiKey'
  | 'payBaseUrl'
  | 'payHost'
  | 'payPort'
  | 'otlpEndpoint'
  | 'otlpProtocol'
  | 'otelServiceName'
  | 'documentStore'
  | 's3Endpoint'
  | 's3Bucket'
  | 's3Region'
>;

export async function runWorkflows(config: WorkflowsConfig, opts: RunWorkflowsOptions = {}): Promise<RunningWorkflows> {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required: the workflows write to PostgreSQL.');
  // Without it anyone who reaches the endpoint's port could run any handler (take a reminder, hand a case over).
  if (config.nodeEnv === 'production' && config.restateIdentityKeys.length === 0) {
    throw new Error('RESTATE_IDENTITY_KEYS is required when NODE_ENV=production: the publickeyv1_… key(s) of the private key restate-server signs its requests with.');
  }
  if (config.restateAdminUrl && !config.restateIngressUrl) {
    throw new Error('RESTATE_INGRESS_URL is required with RESTATE_ADMIN_URL: the housekeeping schedule is started through it.');
  }
  const tracing = startTracing(config, 'faktura-workflows');
  const poolMax = Math.min(config.dbPoolMax, 5);
  const db = new Db(createSql(config.databaseUrl, { max: poolMax }), poolMax);
  // The pool's gauges, and the wake index's lag and parked work, which this process serves (computed when scraped).
  const unwatch = [watchPool('workflows', db), watchWakeIndex(db)];
  // The business clock reads through a pool of its own, so a step inside a transaction never waits on itself.
  const clockSql = createSql(config.databaseUrl, { max: 2 });
  const clock = createPostgresBusinessClock(clockSql);
  let endpoint: WorkflowsEndpoint | undefined;
  let relay: RunningRelay | undefined;
  let unlistenWakes: (() => Promise<void>) | undefined;
  const log = createJsonLog(opts.logStream ?? process.stdout, config.logLevel, 'workflows');
  // One page: receipts render one at a time (each in well under a second) and interrupted issues are rare; the
  // browser is launched on the first render.
  const ownRenderer = opts.pdf ? undefined : createChromiumRenderer({ poolSize: 1 });
  const pdf = opts.pdf ?? ownRenderer!;
  try {
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(db, config, {
        keyring: opts.keyring ?? createKeyring(resolveMasterKey(config).key),
        mailer: opts.mailer ?? createMailer(config, createJsonLog(opts.logStream ?? process.stdout, config.logLevel, 'mail')),
        pdf,
        clock,
        ...(config.restateIngressUrl ? { webhookHandOff: restateWebhookHandOff(config.restateIngressUrl, db) } : {}),
        ...(config.restateAdminUrl ? { openInvocations: restateOpenInvocations(config.restateAdminUrl) } : {}),
        drainEventOutbox: () => relay?.drain() ?? Promise.resolve(),
        log,
        payBaseUrl: payBaseUrl(config),
      }),
      host: config.workflowsHost,
      port: config.workflowsPort,
      advertisedUrl: config.workflowsUrl,
      identityKeys: config.restateIdentityKeys,
      ...(opts.logStream ? { logStream: opts.logStream } : {}),
      logLevel: config.logLevel,
      tracing,
    });
    let registration: Registration | undefined;
    if (config.restateAdminUrl && config.restateIngressUrl) {
      registration = await registerDeployment(config.restateAdminUrl, endpoint.url);
      // Committed events go to the engine as soon as they are committed (notification), and whatever a crash left
      // in the outbox goes at start, on every reconnect of the listener and on every housekeeping pass.
      relay = await startEventRelay(db, createRestateEventForwarder(config.restateIngressUrl), { log });
      await startHousekeeping(config.restateIngressUrl);
      unlistenWakes = await listenForEarlierWakes(db, config.restateIngressUrl, log);
    }
    const ep = endpoint;
    return {
      endpoint: ep,
      registration,
      async close() {
        await unlistenWakes?.();
        await relay?.close();
        await ep.close();
        await ownRenderer?.close();
        for (const stop of unwatch) stop();
        await db.close();
        await clockSql.end({ timeout: 5 });
        // The spans of the last steps go out before the process ends.
        await tracing.shutdown();
      },
    };
  } catch (err) {
    await unlistenWakes?.().catch(() => undefined);
    await relay?.close();
    await endpoint?.close();
    await ownRenderer?.close();
    for (const stop of unwatch) stop();
    await db.close();
    await clockSql.end({ timeout: 5 });
    await tracing.shutdown();
    throw err;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const log = createJsonLog(process.stdout, config.logLevel, 'workflows');
  // The metrics listener first: a port taken stops the start before anything else runs.
  const metrics = await startMetricsListener(config.metricsHost, metricsPort(config, 'workflows'));
  const running = await runWorkflows(config).catch(async (err: unknown) => {
    await metrics.close();
    throw err;
  });
  log('info', 'workflows endpoint listening', {
    url: running.endpoint.url,
    metricsUrl: metrics.url,
    ...(running.registration ? { deploymentId: running.registration.deploymentId, forced: running.registration.forced } : {}),
  });
  stopOnSignal(
    async () => {
      await running.close();
      await metrics.close();
    },
    (event, detail) => (event === 'stopping' ? log('info', 'stopping', { signal: detail }) : log('error', 'stop failed', { err: detail })),
  );
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
