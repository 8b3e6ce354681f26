/**
 * `npm run start:workflows`: the Restate endpoint that serves workflows/ over HTTP/2 (h2c).
 *
 * Needs DATABASE_URL (the activities write to PostgreSQL). With RESTATE_ADMIN_URL set it registers itself with
 * restate-server and then, through RESTATE_INGRESS_URL, starts the housekeeping schedule. `deploy/local/start.ts`
 * runs the same functions in its own process.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as restate from '@restatedev/restate-sdk';
import * as clients from '@restatedev/restate-sdk-clients';
import { purgeIdempotencyKeys } from '../activities/purge-idempotency.ts';
import { mailInvoice, recordFailure, recordInvoiceMail, type InvoiceMailDeps, type MailAttempt } from '../activities/invoices/deliver-invoice-mail.ts';
import { createMailer } from '../activities/mail/create-mailer.ts';
import { createPostgresDocumentStore } from '../services/documents/postgres-document-store.ts';
import { trackingToken } from '../services/invoices/tracking-token.ts';
import { sweepQueuedSends } from '../services/invoices/sweep-queued-sends.ts';
import { createRestateIssueFinisher, sweepStaleIssues } from '../services/invoices/sweep-stale-issues.ts';
import { finishIssue } from '../services/invoices/finish-issue.ts';
import type { PdfRenderer } from '../services/documents/pdf-renderer.ts';
import { createChromiumRenderer } from '../activities/pdf/chromium-renderer.ts';
import { createRestateMailDispatch } from '../services/invoices/restate-mail-dispatch.ts';
import { renderPaymentReceipt } from '../services/payments/render-receipt.ts';
import { createRestateReceiptDispatch } from '../services/payments/receipt-dispatch.ts';
import { sweepPendingReceipts } from '../services/payments/sweep-receipts.ts';
import { sweepPastDue } from '../services/customers/past-due-transitions.ts';
import { deliverWebhook, dueWakeUps, fanOutAndDeliver, type WebhookActivityDeps } from '../activities/webhooks/webhook-activities.ts';
import { createWebhookAgents } from '../activities/webhooks/post-webhook.ts';
import { overdueOrganizations } from '../services/webhooks/delivery-store.ts';
import type { Resolver } from '../services/webhooks/url-policy.ts';
import { createBusinessClock as createPostgresBusinessClock } from '../services/clock/business-clock.ts';
import { createRestateWakeups } from '../services/clock/wakeups.ts';
import type { Clock } from '../services/shared/clock.ts';
import { startEventRelay, type RunningRelay } from '../services/events/event-relay.ts';
import { createRestateEventForwarder } from '../services/events/restate-event-forwarder.ts';
import { sendToRestate } from '../services/shared/restate-ingress.ts';
import { WEBHOOK_DELIVERY } from './webhook-delivery.ts';

/** A send still queued this long after it was requested has lost its hand-off to the engine. */
export const SEND_SWEEP_AGE_MS = 2 * 60 * 1000;
export const SEND_SWEEP_INTERVAL_MS = 60 * 1000;
/** An issue reserved this long ago and not finished has lost its request (a healthy one finishes in a second or two). */
export const ISSUE_SWEEP_AGE_MS = 60 * 1000;
/** A receipt still unrendered this long after its payment was booked has lost its hand-off (one renders in a second). */
export const RECEIPT_SWEEP_AGE_MS = 2 * 60 * 1000;
/** The event relay drains its outbox at least this often (notifications make it immediate in the normal case). */
export const EVENT_RELAY_SWEEP_MS = 5 * 1000;
/** A wake-index row this far past its business time has lost its wake-up; the sweep pokes its organisation. */
export const WAKE_SWEEP_GRACE_MS = 60 * 1000;
import type { Mailer } from '../services/mail/mail-port.ts';
import { createKeyring, type Keyring } from '../services/shared/crypto.ts';
import { resolveMasterKey } from '../services/shared/dev-secrets.ts';
import { stopOnSignal } from '../services/shared/stop-on-signal.ts';
import { readConfig, type Config } from '../services/shared/config.ts';
import { createSql, Db } from '../services/shared/db.ts';
import { HOUSEKEEPING, IDEMPOTENCY_JOB, type Housekeeping, type RunResult } from './housekeeping.ts';
import { createServices, type Activities } from './index.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ActivityResources {
  keyring: Keyring;
  mailer: Mailer;
  /** Renders the PDFs the workflows make (payment receipts, issues whose request died); the browser starts on the first render. */
  pdf: PdfRenderer;
  /** Business time; defaults to the organisations' clocks read through the activities' pool. */
  clock?: Clock;
  /** DNS for webhook deliveries; tests inject one to play a rebinding name server. */
  webhookResolve?: Resolver;
  /** Hands a webhook delivery to its own WebhookDelivery object through the engine (see WebhookActivityDeps.handOff). */
  webhookHandOff?: (deliveryId: string) => Promise<void>;
}

/** A one-way poke of one delivery's WebhookDelivery object through Restate's ingress. */
export const restateWebhookHandOff = (ingressUrl: string) => (deliveryId: string): Promise<void> =>
  sendToRestate(ingressUrl, `${WEBHOOK_DELIVERY}/${encodeURIComponent(deliveryId)}/wake`, 'webhook delivery hand-off');

export function createActivities(
  db: Db,
  config: Pick<Config, 'idempotencyRetentionDays' | 'mailFromAddress' | 'publicApiUrl'> & Partial<Pick<Config, 'webhookAllowLoopback'>>,
  resources: ActivityResources,
): Activities {
  const webhooks: WebhookActivityDeps = {
    db,
    keyring: resources.keyring,
    clock: resources.clock ?? createPostgresBusinessClock(db.sql),
    policy: { allowLoopback: config.webhookAllowLoopback ?? false },
    agents: createWebhookAgents(),
    ...(resources.webhookResolve ? { resolve: resources.webhookResolve } : {}),
    ...(resources.webhookHandOff ? { handOff: resources.webhookHandOff } : {}),
  };
  const mail: InvoiceMailDeps = {
    db,
    keyring: resources.keyring,
    documents: createPostgresDocumentStore(),
    mailer: resources.mailer,
    fromAddress: config.mailFromAddress,
    trackingPixelUrl: (org, invoiceId) =>
      config.publicApiUrl ? `${config.publicApiUrl.replace(/\/+$/, '')}/t/o/${trackingToken(resources.keyring, org, invoiceId)}.gif` : null,
  };
  const documents = createPostgresDocumentStore();
  return {
    finishInvoiceIssue: async (invoiceId) => {
      const done = await finishIssue(
        { db, keyring: resources.keyring, pdf: resources.pdf, documents, mailDomain: config.mailFromAddress.split('@')[1]! },
        invoiceId,
      );
      return { finished: done !== undefined, mail: done?.dispatchMail ?? false };
    },
    purgeIdempotencyKeys: () => db.read((sql) => purgeIdempotencyKeys(sql, config.idempotencyRetentionDays)),
    renderPaymentReceipt: (paymentId) => renderPaymentReceipt({ db, keyring: resources.keyring, pdf: resources.pdf, documents }, paymentId),
    deliverWebhook: (deliveryId) => deliverWebhook(webhooks, deliveryId),
    fanOutAndDeliver: (eventId, organizationId) => fanOutAndDeliver(webhooks, eventId, organizationId),
    dueWakeUps: (organizationId, after, limit) => dueWakeUps(webhooks, organizationId, after, limit),
    mailInvoice: (invoiceId) => mailInvoice(mail, invoiceId),
    recordInvoiceMail: (invoiceId, attempt) => recordInvoiceMail(mail, invoiceId, attempt as MailAttempt),
    markInvoiceMailUndeliverable: async (invoiceId, reason) => {
      const [send] = await db.read((sql) => sql<{ organization_id: string }[]>`SELECT organization_id FROM invoice_sends WHERE invoice_id = ${invoiceId}`);
      if (!send) return { status: 'unknown' };
      return recordFailure(mail, send.organization_id, invoiceId, 'mail_undeliverable', reason);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Logging: JSON lines with pino's numeric levels, like the API's, so one tool reads both.

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

export type LogLine = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export function createJsonLog(stream: NodeJS.WritableStream, minLevel: string, name: string): LogLine {
  const min = LEVELS[minLevel] ?? LEVELS.info!;
  return (level, msg, fields = {}) => {
    const n = LEVELS[level]!;
    if (n < min) return;
    stream.write(`${JSON.stringify({ level: n, time: Date.now(), name, msg, ...fields })}\n`);
  };
}

/**
 * The SDK's own lines at info (one per invocation start and end) drown everything else; they appear only at debug.
 * Handler logs (ctx.console) follow the configured level. Replayed lines are dropped: they were logged already.
 */
function sdkLogger(stream: NodeJS.WritableStream, minLevel: string): restate.LoggerTransport {
  const min = LEVELS[minLevel] ?? LEVELS.info!;
  return (meta, message, ...params) => {
    if (meta.replaying) return;
    const n = LEVELS[meta.level] ?? LEVELS.info!;
    // LogSource is a type-only enum in the SDK's exports, so its value is compared as text.
    const floor = String(meta.source) === 'USER' ? min : Math.max(min, LEVELS.warn!);
    if (n < floor) return;
    const text = [message, ...params].map((p) => (p instanceof Error ? (p.stack ?? p.message) : typeof p === 'string' ? p : JSON.stringify(p))).join(' ');
    const ctx = meta.context;
    stream.write(
      `${JSON.stringify({
        level: n,
        time: Date.now(),
        name: 'workflows',
        msg: text,
        ...(ctx ? { invocationId: ctx.invocationId, target: ctx.invocationTarget } : {}),
      })}\n`,
    );
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The endpoint

export interface WorkflowsEndpoint {
  /** The address restate-server is given at registration. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface EndpointOptions {
  activities: Activities;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Set when restate-server reaches the endpoint under another name than host:port (containers). */
  advertisedUrl?: string | undefined;
  logStream?: NodeJS.WritableStream;
  logLevel?: string;
}

export async function startWorkflowsEndpoint(opts: EndpointOptions): Promise<WorkflowsEndpoint> {
  const handler = restate.createEndpointHandler({
    services: createServices(opts.activities),
    logger: sdkLogger(opts.logStream ?? process.stdout, opts.logLevel ?? 'info'),
  });
  const server = http2.createServer(handler);
  // restate-server keeps its HTTP/2 sessions open; server.close() alone would wait for them forever.
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | undefined;
  return {
    url: opts.advertisedUrl ?? `http://${host}:${port}`,
    port,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        // Let running handlers finish their current step; Restate retries whatever is cut off, from its journal.
        for (const s of sessions) s.close();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, 1000)))]);
        clearTimeout(timer);
        for (const s of sessions) s.destroy();
        await closed;
      })();
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Registration

/**
 * Hash of the sources that define the endpoint's services and what they do. Registration stores it in the
 * deployment's metadata; the next registration of the same URI compares it to decide whether `force` is needed.
 */
export function workflowsSourceHash(root: string = ROOT): string {
  const hash = createHash('sha256');
  for (const dir of ['workflows', 'activities']) {
    for (const file of listSources(join(root, dir))) {
      hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
    }
  }
  return hash.digest('hex');
}

function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listSources(path));
    else if (/\.(ts|js|mjs)$/.test(entry.name)) out.push(path);
  }
  return out;
}

interface DeploymentSummary {
  id: string;
  uri?: string;
  metadata?: Record<string, string>;
  services?: { name: string }[];
}

export interface Registration {
  deploymentId: string;
  /** True when the same URI had been registered with other code and was overwritten. */
  forced: boolean;
  sourceHash: string;
}

const ADMIN_TIMEOUT_MS = 10_000;

const sameUri = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/**
 * Registers the endpoint. Re-registering a URI without `force` returns 200 but changes nothing: after a code change
 * Restate keeps the old schema (guide §7.5 #3), and if another deployment registered since then, the services keep
 * routing to that one. So `force` is set exactly when the stored source hash differs or a service of this URI's
 * deployment routes elsewhere; otherwise re-registration is a no-op.
 */
export async function registerDeployment(adminUrl: string, uri: string, sourceHash: string = workflowsSourceHash()): Promise<Registration> {
  return withRetries(`register ${uri} with ${adminUrl}`, async () => {
    const listed = await fetch(`${adminUrl}/deployments`, { signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
    if (!listed.ok) throw new Error(`GET /deployments answered ${listed.status}: ${await listed.text()}`);
    const { deployments } = (await listed.json()) as { deployments: DeploymentSummary[] };
    const previous = deployments.find((d) => d.uri !== undefined && sameUri(d.uri, uri));
    const force = previous !== undefined && (previous.metadata?.sourceHash !== sourceHash || (await routedElsewhere(adminUrl, previous)));
    const res = await fetch(`${adminUrl}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri, force, metadata: { sourceHash } }),
      // Registration makes Restate call the endpoint for its service list; that takes well under a second.
      signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`POST /deployments answered ${res.status}: ${await res.text()}`);
    const body = (await res.json()) as { id: string };
    return { deploymentId: body.id, forced: force, sourceHash };
  });
}

async function routedElsewhere(adminUrl: string, deployment: DeploymentSummary): Promise<boolean> {
  for (const { name } of deployment.services ?? []) {
    const res = await fetch(`${adminUrl}/services/${encodeURIComponent(name)}`, { signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`GET /services/${name} answered ${res.status}: ${await res.text()}`);
    if (((await res.json()) as { deployment_id?: string }).deployment_id !== deployment.id) return true;
  }
  return false;
}

/**
 * Arms the housekeeping schedule. The object ignores a start while armed, so every boot of every replica may send
 * it; the idempotency key only makes this boot's retries of the send count once.
 */
export async function startHousekeeping(ingressUrl: string, idempotencyKey = `housekeeping-start:${randomUUID()}`): Promise<clients.Send<RunResult>> {
  const ingress = clients.connect({ url: ingressUrl });
  return withRetries(`start ${HOUSEKEEPING}/${IDEMPOTENCY_JOB}`, () =>
    ingress.objectSendClient<Housekeeping>({ name: HOUSEKEEPING }, IDEMPOTENCY_JOB).start(clients.rpc.sendOpts({ idempotencyKey })),
  );
}

/** Restate may be finishing its own start, or not yet routing to a just-registered service: a few short retries. */
async function withRetries<T>(what: string, fn: () => Promise<T>, attempts = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw new Error(`cannot ${what}: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, Math.min(100 * i, 1000)));
    }
  }
}

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
>;

export async function runWorkflows(config: WorkflowsConfig, opts: RunWorkflowsOptions = {}): Promise<RunningWorkflows> {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required: the workflows write to PostgreSQL.');
  if (config.restateAdminUrl && !config.restateIngressUrl) {
    throw new Error('RESTATE_INGRESS_URL is required with RESTATE_ADMIN_URL: the housekeeping schedule is started through it.');
  }
  const poolMax = Math.min(config.dbPoolMax, 5);
  const db = new Db(createSql(config.databaseUrl, { max: poolMax }), poolMax);
  // The business clock reads through a pool of its own, so a step inside a transaction never waits on itself.
  const clockSql = createSql(config.databaseUrl, { max: 2 });
  const clock = createPostgresBusinessClock(clockSql);
  let endpoint: WorkflowsEndpoint | undefined;
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
        ...(config.restateIngressUrl ? { webhookHandOff: restateWebhookHandOff(config.restateIngressUrl) } : {}),
      }),
      host: config.workflowsHost,
      port: config.workflowsPort,
      advertisedUrl: config.workflowsUrl,
      ...(opts.logStream ? { logStream: opts.logStream } : {}),
      logLevel: config.logLevel,
    });
    let registration: Registration | undefined;
    let sweep: NodeJS.Timeout | undefined;
    // Customers crossing the past-due threshold with real time (or a changed threshold, or an invoice issued already
    // overdue) are announced by this sweep, engine or not: at start, then every minute, never two at once.
    const log = createJsonLog(opts.logStream ?? process.stdout, config.logLevel, 'workflows');
    let pastDueRunning = false;
    const runPastDueSweep = async () => {
      if (pastDueRunning) return;
      pastDueRunning = true;
      try {
        const n = await sweepPastDue(db, clock, (org, err) =>
          log('warn', 'past-due reconciliation of an organisation failed; it runs again in a minute', { organizationId: org, err: String(err) }),
        );
        if (n > 0) log('info', 'announced past-due transitions', { count: n });
      } catch (err) {
        log('warn', 'past-due sweep failed; it runs again in a minute', { err: String(err) });
      } finally {
        pastDueRunning = false;
      }
    };
    void runPastDueSweep();
    const pastDueSweep = setInterval(() => void runPastDueSweep(), SEND_SWEEP_INTERVAL_MS);
    pastDueSweep.unref();
    let relay: RunningRelay | undefined;
    if (config.restateAdminUrl && config.restateIngressUrl) {
      registration = await registerDeployment(config.restateAdminUrl, endpoint.url);
      await startHousekeeping(config.restateIngressUrl);
      // Sends whose post-commit hand-off was lost are handed on again, and issues whose request died between
      // reserving the number and finishing are finished: at start, then every minute.
      const dispatch = createRestateMailDispatch(config.restateIngressUrl);
      const finisher = createRestateIssueFinisher(config.restateIngressUrl);
      const receipts = createRestateReceiptDispatch(config.restateIngressUrl);
      const runSweep = () =>
        Promise.all([
          sweepQueuedSends(db, dispatch, { olderThanMs: SEND_SWEEP_AGE_MS }).then(
            (n) => n > 0 && log('info', 'handed queued invoice sends on again', { count: n }),
            (err: unknown) => log('warn', 'queued-send sweep failed; it runs again in a minute', { err: String(err) }),
          ),
          sweepStaleIssues(db, finisher, { olderThanMs: ISSUE_SWEEP_AGE_MS }).then(
            (n) => n > 0 && log('warn', 'handed interrupted issues to the finisher', { count: n }),
            (err: unknown) => log('warn', 'interrupted-issue sweep failed; it runs again in a minute', { err: String(err) }),
          ),
          sweepPendingReceipts(db, receipts, { olderThanMs: RECEIPT_SWEEP_AGE_MS }).then(
            (n) => n > 0 && log('info', 'handed pending receipts on again', { count: n }),
            (err: unknown) => log('warn', 'pending-receipt sweep failed; it runs again in a minute', { err: String(err) }),
          ),
        ]);
      // Committed events go to the engine as soon as they are committed (notification), and whatever a crash left in
      // the outbox goes at start and on every sweep; wake-ups that were lost are found in the wake index.
      relay = await startEventRelay(db, createRestateEventForwarder(config.restateIngressUrl), { sweepIntervalMs: EVENT_RELAY_SWEEP_MS, log });
      const wakeups = createRestateWakeups(config.restateIngressUrl);
      const runWakeSweep = () =>
        overdueOrganizations(db, WAKE_SWEEP_GRACE_MS).then(
          async (orgs) => {
            for (const org of orgs) await wakeups.wakeDue(org);
            if (orgs.length > 0) log('info', 'woke organisations with overdue timed steps', { count: orgs.length });
          },
          (err: unknown) => log('warn', 'wake sweep failed; it runs again in a minute', { err: String(err) }),
        ).catch((err: unknown) => log('warn', 'wake sweep could not reach the engine; it runs again in a minute', { err: String(err) }));
      void runSweep();
      void runWakeSweep();
      sweep = setInterval(() => {
        void runSweep();
        void runWakeSweep();
      }, SEND_SWEEP_INTERVAL_MS);
      sweep.unref();
    }
    const ep = endpoint;
    return {
      endpoint: ep,
      registration,
      async close() {
        if (sweep) clearInterval(sweep);
        clearInterval(pastDueSweep);
        await relay?.close();
        await ep.close();
        await ownRenderer?.close();
        await db.close();
        await clockSql.end({ timeout: 5 });
      },
    };
  } catch (err) {
    await endpoint?.close();
    await ownRenderer?.close();
    await db.close();
    await clockSql.end({ timeout: 5 });
    throw err;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  const log = createJsonLog(process.stdout, config.logLevel, 'workflows');
  const running = await runWorkflows(config);
  log('info', 'workflows endpoint listening', {
    url: running.endpoint.url,
    ...(running.registration ? { deploymentId: running.registration.deploymentId, forced: running.registration.forced } : {}),
  });
  stopOnSignal(
    () => running.close(),
    (event, detail) => (event === 'stopping' ? log('info', 'stopping', { signal: detail }) : log('error', 'stop failed', { err: detail })),
  );
}

if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
