import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { randomBytesPooled } from '../shared/crypto.ts';
import type { Clock } from '../shared/clock.ts';
import type { Db } from '../shared/db.ts';
import { observeHttp } from '../observability/metrics.ts';
import { errSerializer } from '../shared/loggable-error.ts';
import { redactRequestUrl, RouteWords, type QueryRules, type RouteHint } from '../shared/log-redaction.ts';
import type { PaymentProvider } from '../payments/providers/provider.ts';
import type { ReceiptDispatch } from '../payments/receipt-dispatch.ts';
import type { LimiterStore } from '../shared/limiter-store.ts';
import { LookupLimiter, type LookupLimits } from './lookup-limiter.ts';
import { createPayPages } from './pay-page-views.ts';
import { CALLBACK_BODY_LIMIT, registerBodyParsers } from './plugins/body-parsers.ts';
import { payFrameworkErrors, registerErrorHandling } from './plugins/errors.ts';
import { pageCsp } from './plugins/page-policy.ts';
import { servePaymentDomainLinks } from './plugins/payment-domain-host.ts';
import { registerRequestLog } from './plugins/request-log.ts';
import { registerPortalRoutes, type PortalDeps } from './portal/portal-routes.ts';
import { assetRoutes } from './routes/assets.ts';
import { callbackRoutes } from './routes/callbacks.ts';
import { healthRoutes } from './routes/health.ts';
import { logoRoutes } from './routes/logo.ts';
import { payPageRoutes } from './routes/pay-page.ts';
import { registerStartLinkPages } from './routes/start-link-pages.ts';
import { traceRequests } from '../observability/request-spans.ts';
import type { ServiceTracing } from '../observability/tracing.ts';

/**
 * The hosted pay page (docs/api-conventions.md, "Payment links, pay page and receipts"): a Fastify service of its own,
 * apart from the API. It has no API keys and no tenant context: a link reference (128 random bits) or a payment code
 * (rate-limited) leads to one invoice. It shows the creditor, the invoice and its balance read at that moment, opens a
 * checkout with the payment provider for that balance, and receives the provider's signed callbacks, which alone book
 * payments. Card data is entered on the provider's page and never reaches this service or the API.
 *
 * Routes: `GET /` (enter a code), `POST /code`, `GET /p/{reference}`, `POST /p/{reference}/checkout`,
 * `GET /p/{reference}/return`, `POST /callbacks/{provider}`, `GET /assets/pay.css`, `GET /healthz`, `GET /readyz`, plus the
 * provider's own pages when it brings them (the test provider's checkout under /test-provider/).
 *
 * Laid out as the API is: this file builds the server and registers `plugins/` (body parsers, the request log,
 * errors, the page policy, the payment-domain host) and `routes/` (each route file's handlers call the use cases:
 * look-up-payment-code.ts, receive-provider-callback.ts, services/payments/checkout.ts); the customer portal
 * registers its own (portal/portal-routes.ts).
 */
export interface PayDeps {
  db: Db;
  /** Business time: provider payments are dated the organisation's today. */
  clock: Clock;
  provider: PaymentProvider;
  /** Mounts the provider's own pages on this server (the test provider's checkout); absent for real providers. */
  providerRoutes?: (app: FastifyInstance) => void;
  /** The pay page's public address: links, return and callback URLs are built on it. */
  payBaseUrl: string;
  /** Hands a payment booked by a callback to the receipt workflow; without it the housekeeping loop picks it up (the receipt request is in the wake index). */
  receiptDispatch?: ReceiptDispatch;
  logLevel: string;
  logStream?: NodeJS.WritableStream;
  /** A SERVER span per request when tracing is on (services/observability/request-spans.ts). */
  tracing?: ServiceTracing;
  /** Behind a reverse proxy: the client address for the look-up limit comes from X-Forwarded-For. */
  trustProxy?: boolean;
  lookupLimits?: LookupLimits;
  /** The look-up limiter's time source (milliseconds); tests pass one they control. */
  limiterClock?: () => number;
  /**
   * Where the look-up buckets live: the shared store (Redis) when REDIS_URL is set, so every pay replica counts
   * against the same budgets; without it, the process's own buckets.
   */
  limiterStore?: LimiterStore;
  /** The customer portal (services/pay/portal); without it the portal's pages are not served. */
  portal?: PortalDeps;
}

/** Query parameters whose values are harmless; every other value (a code, an e-mail, the session…) is masked. */
const PAY_QUERY: QueryRules = { keep: new Set(['lang', 'declined']), maskedAs: { session: '[session]' } };

/**
 * Paths carry capabilities (link references, checkout tokens) and people type codes or addresses into them: logs
 * show neither (services/shared/log-redaction.ts). Given the route, parameters that are not UUIDs show by their
 * name (`/p/[reference]`) and unmatched paths keep only the service's fixed words; query values are masked as the
 * API masks them. Without a route, references and checkout tokens are masked where they stand.
 */
export function redactPayUrl(url: string, hint?: RouteHint): string {
  if (hint?.route || hint?.words) return redactRequestUrl(url, PAY_QUERY, hint);
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q))
    .replace(/\/p\/[^/]+/, '/p/[reference]')
    .replace(/\/checkout\/[^/]+/, '/checkout/[token]');
  return redactRequestUrl(`${path}${q < 0 ? '' : url.slice(q)}`, PAY_QUERY);
}

export async function buildPayApp(deps: PayDeps): Promise<FastifyInstance> {
  const routeWords = new RouteWords();
  const base = deps.payBaseUrl.replace(/\/+$/, '');
  const pages = createPayPages(pageCsp(deps.provider.checkoutOrigins));
  const app = Fastify({
    // Requests Fastify refuses before routing (a path that cannot be decoded) are answered like any other.
    frameworkErrors: payFrameworkErrors(pages),
    logger: {
      level: deps.logLevel,
      ...(deps.logStream ? { stream: deps.logStream } : {}),
      serializers: {
        req: (req: { method: string; url: string; id: string; routeOptions?: { url?: string } }) => ({
          method: req.method,
          url: redactPayUrl(req.url, { route: req.routeOptions?.url, words: routeWords }),
          id: req.id,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        // Errors without the data their messages may quote, as in the API (services/shared/loggable-error.ts).
        err: errSerializer,
      },
    },
    genReqId: () => `req_${randomBytesPooled(10).toString('hex')}`,
    trustProxy: deps.trustProxy ?? false,
    bodyLimit: CALLBACK_BODY_LIMIT,
    return503OnClosing: false,
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 8192 },
  });
  // The fixed words of every route, for masking the path of a request no route matched; the provider's name is one.
  app.addHook('onRoute', (route) => routeWords.add(route.url));
  routeWords.add(`/callbacks/${deps.provider.name}`);

  // First of all hooks: every later hook, the handler and the request's log lines run inside the request's span.
  if (deps.tracing) traceRequests(app, deps.tracing);
  await registerBodyParsers(app);
  registerRequestLog(app);
  // Rate, errors and duration per route template, for the process's metrics (served by its entry point only).
  observeHttp(app, 'pay');
  // On a verified payment domain: `/<reference>` leads to the pay page, and only that organisation's pay pages are served.
  servePaymentDomainLinks(app, deps.db, base);
  registerErrorHandling(app, pages);

  healthRoutes(app, deps.db);
  assetRoutes(app);
  payPageRoutes(app, {
    db: deps.db,
    pages,
    limiter: new LookupLimiter(deps.lookupLimits, deps.limiterClock, deps.limiterStore),
    checkout: { db: deps.db, provider: deps.provider, payBaseUrl: base },
  });
  callbackRoutes(app, { db: deps.db, clock: deps.clock, provider: deps.provider, receiptDispatch: deps.receiptDispatch });
  logoRoutes(app, deps.db);
  deps.providerRoutes?.(app);
  if (deps.portal) await registerPortalRoutes(app, { db: deps.db, clock: deps.clock, payBaseUrl: base, trustProxy: deps.trustProxy ?? false }, deps.portal);
  // The test provider's pages of the start links (verification, card setup, accounting connection).
  if (deps.providerRoutes) registerStartLinkPages(app, deps.db);

  await app.ready();
  return app;
}
