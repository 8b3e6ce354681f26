import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from '../../services/shared/config.ts';
import type { Db } from '../../services/shared/db.ts';
import { observeHttp } from '../observability/metrics.ts';
import { randomBytesPooled, type Keyring } from '../../services/shared/crypto.ts';
import type { Clock } from '../../services/shared/clock.ts';
import type { DocumentStore } from '../documents/document-store.ts';
import type { PdfRenderer } from '../documents/pdf-renderer.ts';
import type { InvoiceMailDispatch } from '../invoices/send-invoice.ts';
import type { ReceiptDispatch } from '../payments/receipt-dispatch.ts';
import type { Wakeups } from '../clock/wakeups.ts';
import type { EngineClient } from '../../services/shared/engine-client.ts';
import type { Resolver } from '../webhooks/url-policy.ts';
import type { DomainSettings } from '../domains/domain-settings.ts';
import { trackingRoutes } from './routes/tracking.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { errSerializer } from '../../services/shared/loggable-error.ts';
import { redactRequestUrl, RouteWords, type RouteHint } from '../../services/shared/log-redaction.ts';
import { clientErrorHandler, findNul, frameworkErrorHandler, registerErrorHandling } from './plugins/errors.ts';
import { registerJsonBody } from './plugins/json-body.ts';
import { registerPathIdCheck } from './plugins/path-ids.ts';
import { ApiKeyCache, createAuthenticate } from './plugins/auth.ts';
import { createRateLimiter } from './plugins/rate-limit.ts';
import { MemoryLimiterStore, type LimiterStore } from '../../services/shared/limiter-store.ts';
import { isMutating, requireIdempotencyKey } from './idempotency.ts';
import { createValidatorCompiler } from '../../services/shared/schema-validator.ts';
import { NO_PROPERTIES } from './no-properties.ts';
import { registerOpenApi } from './openapi.ts';
import { registerHealthRoutes, type ReadinessProbe } from './routes/health.ts';
import { registerV1Routes } from './routes/v1/index.ts';
import { traceRequests } from '../observability/request-spans.ts';
import type { ServiceTracing } from '../observability/tracing.ts';
import './context.ts';

export interface AppDeps {
  db: Db;
  keyring: Keyring;
  /** Renders issued documents (Chromium in production, wired by the entry point). */
  pdf: PdfRenderer;
  /** The write-once store for issued PDFs. */
  documents: DocumentStore;
  /** Business time: every "today" comes from here. */
  clock: Clock;
  /** Hands committed invoice sends to the mail workflow. */
  mailDispatch: InvoiceMailDispatch;
  /** The domain of the Message-IDs the service's mails carry (from MAIL_FROM_ADDRESS). */
  mailDomain: string;
  config: Pick<Config, 'rateLimitDefault' | 'rateLimitDocument' | 'authCacheTtlMs' | 'logLevel'>;
  /** Extra readiness checks beyond PostgreSQL (Restate, when the stack has one). */
  readiness?: ReadinessProbe[];
  /** Where logs go; defaults to stdout. Tests pass a stream to read them. */
  logStream?: NodeJS.WritableStream;
  /** A SERVER span per request when tracing is on (services/observability/request-spans.ts). */
  tracing?: ServiceTracing;
  authCache?: ApiKeyCache;
  /** The rate limiter's time source (milliseconds); tests pass a clock they control. */
  rateLimitClock?: () => number;
  /**
   * Where the rate-limit buckets live: the shared store (Redis) when REDIS_URL is set, so a key gets its rate across
   * all replicas together; without it, the process's own buckets.
   */
  limiterStore?: LimiterStore;
  /** Lets tests add routes (e.g. a document-class route) before the app is sealed. */
  extraRoutes?: (app: FastifyInstance, deps: AppDeps) => void;
  /** The base of payment links (PAY_BASE_URL or the pay service's own address); default http://127.0.0.1:3001. */
  payBaseUrl?: string;
  /**
   * Hands a booked payment's receipt to the receipt workflow after commit. Without it (or when it fails) the
   * housekeeping loop picks the receipt up within a minute or two.
   */
  receiptDispatch?: ReceiptDispatch;
  /**
   * Wakes timed steps that have come due (test clock advance, webhook replay, ping, reactivation). Without it the
   * hand-off fails and is logged; the housekeeping loop wakes them within a minute or two.
   */
  wakeups?: Wakeups;
  /** Webhook URL rules: WEBHOOK_ALLOW_LOOPBACK, and the resolver registration checks names with (DNS by default). */
  webhooks?: { allowLoopback: boolean; resolve?: Resolver };
  /** The API's public base URL (PUBLIC_API_URL): the OpenAPI document's server. Unset: `/`, the document's own origin. */
  publicApiUrl?: string | undefined;
  /**
   * Runs after a PUT /v1/reminder-settings has committed (never on a replay): the dunning engine re-plans the
   * organisation's open invoices with the new settings. A failure is logged, not answered: the settings are committed.
   */
  onReminderSettingsChanged?: (organizationId: string) => Promise<void>;
  /**
   * Pokes durable work listed in the wake index right after the commit that made it due (a manual reminder's
   * document and mail). Without it the housekeeping loop pokes it within a minute or two.
   */
  engine?: Pick<EngineClient, 'poke'>;
  /** DNS checks and portal addresses of the payment-domain and customer-portal routes; default: system resolvers, no base domain. */
  domains?: DomainSettings;
  /** Test-only: runs after each operation of a POST /v1/batch (a test throws here to crash a batch midway). */
  afterBatchOperation?: (index: number) => void | Promise<void>;
}

/** Every authenticated route with its scope: the docs test checks each one appears in the OpenAPI document. */
export interface ScopedRoute {
  method: string;
  url: string;
  scope: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    scopedRoutes: ScopedRoute[];
  }
}

/** Query parameters whose values are safe to log; every other value (e-mail, references, cursors…) is masked. */
const LOGGABLE_QUERY = new Set(['limit', 'active', 'status', 'issue', 'send', 'type', 'standard']);

/**
 * The request line as logged (services/shared/log-redaction.ts): only values of known harmless query parameters are
 * kept, and, given the route, path segments that are neither UUIDs nor fixed words of the route are masked.
 */
export function redactUrl(url: string, hint?: RouteHint): string {
  return redactRequestUrl(url, { keep: LOGGABLE_QUERY }, hint);
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const routeWords = new RouteWords();
  const loggerOpts: FastifyServerOptions['logger'] = {
    level: deps.config.logLevel,
    ...(deps.logStream ? { stream: deps.logStream } : {}),
    // Bodies are never logged; headers are not either (they carry keys). Only the masked request line.
    serializers: {
      req: (req: { method: string; url: string; id: string; routeOptions?: { url?: string } }) => ({
        method: req.method,
        url: redactUrl(req.url, { route: req.routeOptions?.url, words: routeWords }),
        id: req.id,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      // Every logged error without the data its message may quote (services/shared/loggable-error.ts).
      err: errSerializer,
    },
  };
  const app = Fastify({
    logger: loggerOpts,
    // 80 random bits, hex, from the pooled generator: crypto.randomBytes would pay for a fresh draw per request.
    genReqId: () => `req_${randomBytesPooled(10).toString('hex')}`,
    bodyLimit: 1024 * 1024,
    // During shutdown, requests already on open connections are still served normally (the database closes only
    // after the app has), instead of Fastify's fixed non-envelope 503.
    return503OnClosing: false,
    // One log line per request (written in onResponse), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Long path ids (any Node's 16 KiB header limit lets through) reach the use case and get the resource's own 404
    // rather than a router error.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384 },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  });

  app.setValidatorCompiler(createValidatorCompiler());
  // First of all hooks: every later hook, the handler and the request's log lines run inside the request's span.
  if (deps.tracing) traceRequests(app, deps.tracing);
  // The fixed words of every route, for masking the path of a request no route matched.
  app.addHook('onRoute', (route) => routeWords.add(route.url));
  app.decorateRequest('idempotencyKey', undefined);

  registerJsonBody(app);
  registerPathIdCheck(app);

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('Request-Id', req.id);
    // An unknown path is 404 route_not_found before its body is looked at (its size, type or JSON).
    if (req.is404) return done(new DomainError('route_not_found', `No route ${req.method} ${req.url.split('?')[0]}.`));
    done();
  });
  // U+0000 is valid JSON and a valid query character, but PostgreSQL text cannot hold it: refuse it up front.
  app.addHook('preValidation', (req, _reply, done) => {
    const where = findNul(req.query, '') ?? findNul(req.body, '');
    if (where === undefined) return done();
    done(new DomainError('validation_failed', 'Text must not contain the NUL character (U+0000).', {
      details: [{ path: where, message: 'must not contain U+0000' }],
    }));
  });
  app.addHook('onResponse', (req, reply, done) => {
    if ((req.log as FastifyBaseLogger & { isLevelEnabled(level: string): boolean }).isLevelEnabled('info')) {
      req.log.info({ req, res: reply, responseTime: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
    }
    done();
  });

  // Rate, errors and duration per route template, for the process's metrics (served by its entry point only).
  observeHttp(app, 'api');

  registerErrorHandling(app);

  const cache = deps.authCache ?? new ApiKeyCache(deps.config.authCacheTtlMs);
  const authenticate = createAuthenticate(deps.db, cache);
  const rateLimit = createRateLimiter(
    { default: deps.config.rateLimitDefault, document: deps.config.rateLimitDocument },
    deps.limiterStore ?? new MemoryLimiterStore(),
    deps.rateLimitClock,
  );
  const catalogue: ScopedRoute[] = [];
  app.decorate('scopedRoutes', catalogue);
  app.addHook('onRoute', (route) => {
    if (!route.config?.scope && !route.config?.scopesPerOperation) return;
    const scope = route.config.scope;
    if (scope) for (const method of [route.method].flat()) if (method !== 'HEAD') catalogue.push({ method, url: route.url, scope });
    const own = route.onRequest ? [route.onRequest].flat() : [];
    route.onRequest = [authenticate, rateLimit, ...own];
    if (isMutating(route.method)) {
      const pre = route.preValidation ? [route.preValidation].flat() : [];
      route.preValidation = [requireIdempotencyKey, ...pre];
    }
    // Strict everywhere (docs/api-conventions.md, "Requests"): a route that takes no query parameters refuses unknown
    // ones, and a mutating route whose request is "none" refuses a body with properties (no body, or {}, is fine). 400
    // validation_failed.
    route.schema = {
      ...route.schema,
      ...(route.schema?.querystring ? {} : { querystring: NO_PROPERTIES }),
      ...(route.schema?.body || !isMutating(route.method) ? {} : { body: NO_PROPERTIES }),
    };
  });

  await registerOpenApi(app, { publicApiUrl: deps.publicApiUrl });
  registerHealthRoutes(app, deps.db, deps.readiness ?? []);
  trackingRoutes(app, deps);
  await app.register(async (v1) => registerV1Routes(v1, deps), { prefix: '/v1' });
  deps.extraRoutes?.(app, deps);
  await app.ready();
  return app;
}
