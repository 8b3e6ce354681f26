/**
 * Prometheus metrics (docs/operations.md, "Metrics"): one registry per process, served at `GET /metrics` on a
 * listener of its own (METRICS_HOST, METRICS_PORT + the process's offset), never on a public port. The series are
 * recorded where their events happen, through the small `record…` functions below; the gauges that read state
 * (the database pools, the wake index) are computed when scraped.
 *
 * Label values come from route templates and small fixed vocabularies only: never an id, a key, an e-mail address or
 * anything else a request or a customer supplied (test/e2e/metrics.test.ts scrapes for UUIDs and '@').
 *
 * Only the process entry points open the listener (services/api/main.ts, services/pay/main.ts, workflows/main.ts and
 * the stack of `npm start`); apps built by tests record into the registry without serving it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WorkTarget } from '../../contracts/workflows.ts';
import { callableHost } from '../shared/config.ts';
import type { Db } from '../shared/db.ts';

/** The process's one registry. */
export const registry = new Registry();

// ---------------------------------------------------------------------------------------------------------------
// HTTP: rate, errors and duration per route template (the API and the pay service)

const HTTP_LABELS = ['app', 'method', 'route', 'status_class'] as const;
/** Methods a route can have; anything else a client sends is `other`, so a client cannot mint label values. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** The route label of a request no route matched (a 404 before routing): its path is the client's, never a label. */
export const UNMATCHED_ROUTE = 'unmatched';

const httpRequests = new Counter({
  name: 'faktura_http_requests_total',
  help: 'HTTP requests answered, by app (api, pay), method, route template and status class (2xx, 3xx, 4xx, 5xx).',
  labelNames: HTTP_LABELS,
  registers: [registry],
});
const httpErrors = new Counter({
  name: 'faktura_http_request_errors_total',
  help: 'HTTP requests answered with a 5xx status, by app, method and route template.',
  labelNames: ['app', 'method', 'route'] as const,
  registers: [registry],
});
const httpDuration = new Histogram({
  name: 'faktura_http_request_duration_seconds',
  help: 'Time from a request arriving to its answer being written, by app, method, route template and status class.',
  labelNames: HTTP_LABELS,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

/** Records every answered request of `app` (an onResponse hook; register it before the routes). */
export function observeHttp(app: FastifyInstance, name: 'api' | 'pay'): void {
  app.addHook('onResponse', (req, reply, done) => {
    const labels = {
      app: name,
      method: METHODS.has(req.method) ? req.method : 'other',
      // The template (`/v1/customers/:id`), never the URL: that holds ids.
      route: req.routeOptions.url ?? UNMATCHED_ROUTE,
      status_class: `${Math.floor(reply.statusCode / 100)}xx`,
    };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) httpErrors.inc({ app: labels.app, method: labels.method, route: labels.route });
    done();
  });
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL pools: the admission gate of each `Db` (services/shared/db.ts), which is the size of its pool

const pools = new Map<Db, string>();

/** Reports `db`'s gate under `pool` (api, pay, workflows) until the returned function is called. */
export function watchPool(pool: string, db: Db): () => void {
  pools.set(db, pool);
  return () => void pools.delete(db);
}

/** The watched pools' figure, summed per pool name (a process may hold more than one pool of a name). */
function perPool(figure: (db: Db) => number): Map<string, number> {
  const sums = new Map<string, number>();
  for (const [db, pool] of pools) sums.set(pool, (sums.get(pool) ?? 0) + figure(db));
  return sums;
}

function poolGauge(name: string, help: string, figure: (db: Db) => number): void {
  new Gauge({
    name,
    help,
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [pool, value] of perPool(figure)) this.set({ pool }, value);
    },
  });
}
poolGauge('faktura_db_pool_connections_in_use', 'Units of work holding one of the pool\'s connections, by pool (api, pay, workflows).', (db) => db.inUse);
poolGauge('faktura_db_pool_waiting', 'Units of work waiting for a connection of the pool (the pool is exhausted while above 0).', (db) => db.waiting);
poolGauge('faktura_db_pool_size', 'Connections the pool may open.', (db) => db.size);

// ---------------------------------------------------------------------------------------------------------------
// The wake index: lag and parked work per service (served by the workflows process)

/** Every service with rows in the wake index; a new target's service must be added (the type says so). */
const WAKE_SERVICE_SET: Record<WorkTarget['service'], true> = {
  InvoiceMail: true,
  InvoiceIssue: true,
  PaymentReceipt: true,
  WebhookDelivery: true,
  Dunning: true,
  Case: true,
  SubscriptionSchedule: true,
  PortalSignInMail: true,
  PastDue: true,
  EventOutbox: true,
};
export const WAKE_SERVICES = Object.keys(WAKE_SERVICE_SET) as WorkTarget['service'][];

export interface WakeQueueFigures {
  /** Seconds since the oldest due, unparked row of each service came due (claimed or not); 0 with nothing due. */
  lagSeconds: Map<string, number>;
  /** Parked rows per service. */
  parked: Map<string, number>;
}

/**
 * The two figures in two index reads: the oldest unparked row of each service, by a skip scan over
 * `wake_index_service_due` (migration 031: one probe per service, each stopping at the service's first entry), whose
 * age is the lag when it is due (a row not yet due means nothing of the service is due: 0); and the parked rows
 * through `wake_index_parked`, which holds only those. Neither reads the rows behind the oldest, so a scrape costs the
 * same with a million rows waiting or due (test/db/wake-metrics-plan.test.ts). Due means by real time: a sandbox
 * organisation's row counts from its business due time.
 */
export async function readWakeQueue(db: Db): Promise<WakeQueueFigures> {
  // One after the other, on the one connection the gate admits.
  const [lag, parked] = await db.read(async (sql) => [
    await sql<{ service: string; lag: number }[]>`
      WITH RECURSIVE oldest AS (
        (SELECT w.service, w.due_at FROM wake_index w WHERE w.parked_at IS NULL ORDER BY w.service, w.due_at LIMIT 1)
        UNION ALL
        SELECT n.service, n.due_at FROM oldest o CROSS JOIN LATERAL (
          SELECT w.service, w.due_at FROM wake_index w
          WHERE w.parked_at IS NULL AND w.service > o.service
          ORDER BY w.service, w.due_at LIMIT 1) n
      )
      SELECT service, extract(epoch FROM now() - due_at)::float8 AS lag FROM oldest`,
    await sql<{ service: string; n: number }[]>`
      SELECT service, count(*)::int AS n FROM wake_index WHERE parked_at IS NOT NULL GROUP BY service`,
  ] as const);
  const parkedPer = new Map<string, number>(WAKE_SERVICES.map((s) => [s, 0]));
  for (const r of parked) parkedPer.set(r.service, r.n);
  const lagPer = new Map<string, number>(WAKE_SERVICES.map((s) => [s, 0]));
  for (const r of lag) lagPer.set(r.service, Math.max(0, r.lag));
  return { lagSeconds: lagPer, parked: parkedPer };
}

let wakeDb: Db | undefined;
/**
 * The read in flight: a scrape collects both gauges at once (prom-client starts every metric's collect in the same
 * tick), and both share this one read; the next scrape reads afresh.
 */
let wakeRead: Promise<WakeQueueFigures> | undefined;

function wakeFigures(): Promise<WakeQueueFigures> | undefined {
  if (!wakeDb) return undefined;
  if (!wakeRead) {
    const read = readWakeQueue(wakeDb);
    wakeRead = read;
    const done = () => {
      if (wakeRead === read) wakeRead = undefined;
    };
    read.then(done, done);
  }
  return wakeRead;
}

/** The workflows process reports the wake index through `db` until the returned function is called. */
export function watchWakeIndex(db: Db): () => void {
  wakeDb = db;
  wakeRead = undefined;
  return () => {
    if (wakeDb === db) wakeDb = undefined;
    wakeRead = undefined;
  };
}

function wakeGauge(name: string, help: string, pick: (f: WakeQueueFigures) => Map<string, number>): void {
  new Gauge({
    name,
    help,
    labelNames: ['service'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      // A database that does not answer leaves the gauge without series (alert on its absence), not the scrape failed:
      // the process's other series matter most just then.
      const figures = await wakeFigures()?.catch(() => undefined);
      if (!figures) return;
      for (const [service, value] of pick(figures)) this.set({ service }, value);
    },
  });
}
wakeGauge('faktura_wake_lag_seconds', 'Age of the oldest due, unparked wake-index row per durable service (seconds; 0 when nothing is due).', (f) => f.lagSeconds);
wakeGauge('faktura_parked_work', 'Parked wake-index rows per durable service: work whose retries ran out and waits for an operator.', (f) => f.parked);

// ---------------------------------------------------------------------------------------------------------------
// Durable work: webhooks, reminders, collection cases, PDFs, mails and letters

const webhookDeliveries = new Counter({
  name: 'faktura_webhook_deliveries_total',
  help: 'Webhook delivery attempts recorded, by outcome: delivered, failed (a retry follows), given_up (the last attempt failed).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
const webhookLag = new Histogram({
  name: 'faktura_webhook_delivery_lag_seconds',
  help: 'Time from an event\'s creation to its successful delivery to an endpoint (seconds).',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 6 * 3600, 24 * 3600, 3 * 24 * 3600],
  registers: [registry],
});

export type WebhookOutcome = 'delivered' | 'failed' | 'given_up';

/** One recorded attempt; `lagSeconds` for a delivered event (a ping has no event, and no lag). */
export function recordWebhookAttempt(outcome: WebhookOutcome, lagSeconds?: number): void {
  webhookDeliveries.inc({ outcome });
  if (outcome === 'delivered' && lagSeconds !== undefined) webhookLag.observe(Math.max(0, lagSeconds));
}

const reminderSteps = new Counter({
  name: 'faktura_reminder_steps_total',
  help: 'Dunning steps taken, by kind: payment_reminder, reminder, demand_letter, limitation_warning, collect.',
  labelNames: ['kind'] as const,
  registers: [registry],
});
export type ReminderStepKind = 'payment_reminder' | 'reminder' | 'demand_letter' | 'limitation_warning' | 'collect';
export const recordReminderStep = (kind: ReminderStepKind): void => void reminderSteps.inc({ kind });

const caseSteps = new Counter({
  name: 'faktura_case_steps_total',
  help: 'Collection-case steps taken, by kind: paakrav (the påkrav recorded as sent), hand_over (the case handed to the partner).',
  labelNames: ['kind'] as const,
  registers: [registry],
});
export type CaseStepKind = 'paakrav' | 'hand_over';
export const recordCaseStep = (kind: CaseStepKind): void => void caseSteps.inc({ kind });

const pdfRender = new Histogram({
  name: 'faktura_pdf_render_seconds',
  help: 'Time to render one PDF with Chromium, waiting for a page included, by document kind.',
  labelNames: ['kind'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
  registers: [registry],
});
export const recordPdfRender = (kind: string, seconds: number): void => void pdfRender.observe({ kind }, seconds);

const documentDeliveries = new Counter({
  name: 'faktura_document_deliveries_total',
  help: 'Mails, letters and e-invoices handed to their channel, by channel (email, letter, einvoice, none: nobody to send to) and outcome (sent, refused, failed: retried later).',
  labelNames: ['channel', 'outcome'] as const,
  registers: [registry],
});
export type DeliveryChannel = 'email' | 'letter' | 'einvoice' | 'none';
export type DeliveryOutcome = 'sent' | 'refused' | 'failed';
export const recordDocumentDelivery = (channel: DeliveryChannel, outcome: DeliveryOutcome): void => void documentDeliveries.inc({ channel, outcome });

// ---------------------------------------------------------------------------------------------------------------
// The listener

let defaultsCollected = false;

export interface MetricsListener {
  /** e.g. http://127.0.0.1:9464/metrics */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves the registry at `GET /metrics` on `host:port` (0: a free port) and nothing else. Fails when the port is
 * taken: a process whose metrics cannot be scraped should not start unnoticed.
 */
export async function startMetricsListener(host: string, port: number): Promise<MetricsListener> {
  if (!defaultsCollected) {
    // Node's own figures (CPU, memory, event loop lag, handles), once per process.
    collectDefaultMetrics({ register: registry });
    defaultsCollected = true;
  }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`the metrics port ${host}:${port} is in use (METRICS_PORT)`) : err),
    );
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${callableHost(host)}:${bound}/metrics`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
