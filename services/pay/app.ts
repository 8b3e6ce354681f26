import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomBytesPooled } from '../shared/crypto.ts';
import type { Clock } from '../shared/clock.ts';
import type { Db } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { errSerializer } from '../shared/loggable-error.ts';
import { redactRequestUrl, RouteWords, type QueryRules, type RouteHint } from '../shared/log-redaction.ts';
import { normalizePaymentCode } from '../payments/payment-links.ts';
import { checkoutStatus, loadPayView, startCheckout, type PayView } from '../payments/checkout.ts';
import { handleProviderEvent, UnknownCheckoutSession, type HandledEvent } from '../payments/handle-provider-event.ts';
import { InvalidProviderEvent, type PaymentProvider } from '../payments/providers/provider.ts';
import type { ReceiptDispatch } from '../payments/receipt-dispatch.ts';
import { LookupLimiter, type LookupLimits } from './lookup-limiter.ts';
import { PAY_CSS, renderPage, type LayoutInput } from './pages.ts';
import { formatOere } from '../shared/money.ts';
import { formatDate, pickLanguage, TEXTS, type Language } from './texts.ts';
import { payPageLogoRoute } from '../branding/pay-page-logo.ts';
import { servePaymentDomainLinks } from './payment-domain-host.ts';
import { registerPortalRoutes, type PortalDeps } from './portal/portal-routes.ts';
import { registerStartLinkPages } from './start-link-pages.ts';
import { sendHtmlPage } from './html-page.ts';

/**
 * The hosted pay page (spec 2.5, rule 1.11): a Fastify service of its own, apart from the API. It has no API keys
 * and no tenant context: a link reference (128 random bits) or a payment code (rate-limited) leads to one invoice.
 * It shows the creditor, the invoice and its balance read at that moment, opens a checkout with the payment provider
 * for that balance, and receives the provider's signed callbacks, which alone book payments. Card data is entered
 * on the provider's page and never reaches this service or the API.
 *
 * Routes: `GET /` (enter a code), `POST /code`, `GET /p/{reference}`, `POST /p/{reference}/checkout`,
 * `GET /p/{reference}/return`, `POST /callbacks/{provider}`, `GET /assets/pay.css`, `GET /healthz`, plus the
 * provider's own pages when it brings them (the test provider's checkout under /test-provider/).
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
  /** Behind a reverse proxy: the client address for the look-up limit comes from X-Forwarded-For. */
  trustProxy?: boolean;
  lookupLimits?: LookupLimits;
  /** The look-up limiter's time source (milliseconds); tests pass one they control. */
  limiterClock?: () => number;
  /** The customer portal (services/pay/portal); without it the portal's pages are not served. */
  portal?: PortalDeps;
}

const CALLBACK_BODY_LIMIT = 64 * 1024;
/** The API's codes (decisions.md) for the framework's own refusals of a callback. */
const FRAMEWORK_ERROR_CODES: Record<number, string> = { 413: 'payload_too_large', 415: 'unsupported_media_type' };
const FORM_BODY_LIMIT = 4 * 1024;
/** Seconds between reloads of the return page while the provider's confirmation is on its way. */
const PROCESSING_REFRESH_S = 2;

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
  // Requests Fastify refuses before routing (a path that cannot be decoded) are answered like any other: set below,
  // once the pages and the callback envelope exist.
  let frameworkError: (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => void = (_err, _req, reply) => void reply.code(400).send();
  const app = Fastify({
    frameworkErrors: (err, req, reply) => frameworkError(err, req, reply),
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
  const limiter = new LookupLimiter(deps.lookupLimits, deps.limiterClock);
  const csp = [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self'",
    // The checkout form's answer is a redirect to the provider: browsers check that against form-action.
    `form-action 'self' ${deps.provider.checkoutOrigins.join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');

  // Forms (urlencoded, small) for the pages; callbacks keep their exact bytes, which their signatures cover.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_req, body, done) => {
    const fields: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(body as string)) if (!(k in fields)) fields[k] = v;
    done(null, fields);
  });
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: CALLBACK_BODY_LIMIT }, (_req, body, done) => done(null, body));

  // Every answer names its request, as the API's do, so a customer or provider can quote it.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('Request-Id', req.id);
    done();
  });

  // On a verified payment domain: `/<reference>` leads to the pay page, and only that organisation's pay pages are served.
  servePaymentDomainLinks(app, deps.db, base);

  app.addHook('onResponse', (req, reply, done) => {
    req.log.info({ req, res: reply, responseTime: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
    done();
  });

  const html = (reply: FastifyReply, status: number, body: string): FastifyReply => sendHtmlPage(reply, status, body, csp);

  const langOf = (req: FastifyRequest, fallback?: Language): Language => {
    const q = req.query as Record<string, unknown> | undefined;
    const b = req.body as Record<string, unknown> | undefined;
    return pickLanguage(b?.lang ?? q?.lang, req.headers['accept-language'], fallback);
  };
  const switchHref = (path: string, lang: Language): string => `${path}${path.includes('?') ? '&' : '?'}lang=${TEXTS[lang].otherLanguage.code}`;
  const serviceLayout = (lang: Language, title: string, path: string): LayoutInput => ({
    lang, title, brand: TEXTS[lang].serviceName, switchHref: switchHref(path, lang),
  });

  /** A page that says what went wrong (not found, or anything else) and leads back to the code page. */
  const messagePage = (reply: FastifyReply, status: number, lang: Language) => {
    const t = TEXTS[lang];
    const [title, text] = status === 404 ? [t.notFoundTitle, t.notFoundText] : [t.errorTitle, t.errorText];
    return html(reply, status, renderPage('message', serviceLayout(lang, title, '/'), {
      heading: title, text, linkHref: `/?lang=${lang}`, linkText: t.goToCode,
    }));
  };
  const notFoundPage = (reply: FastifyReply, lang: Language) => messagePage(reply, 404, lang);

  const codePage = (reply: FastifyReply, status: number, lang: Language, code: string, error: string | null) =>
    html(reply, status, renderPage('code', serviceLayout(lang, TEXTS[lang].codeTitle, '/'), { code, error }));

  const invoicePage = (reply: FastifyReply, view: PayView, lang: Language, notice: string | null = null, status = 200) => {
    const t = TEXTS[lang];
    const path = `/p/${view.reference}`;
    return html(reply, status, renderPage('invoice', {
      lang, title: t.invoiceTitle(view.invoiceNumber), brand: view.creditorName, switchHref: switchHref(path, lang),
      logoSrc: view.logoSha256 ? `${path}/logo/${view.logoSha256}` : null,
    }, {
      heading: t.invoiceTitle(view.invoiceNumber),
      notice,
      creditor: view.creditorName,
      invoiceNumber: String(view.invoiceNumber),
      dueDate: view.dueDate ? formatDate(view.dueDate, lang) : t.noDueDate,
      total: formatOere(view.grossOere, lang),
      balance: formatOere(Math.max(0, view.balanceOere), lang),
      payable: view.balanceOere > 0,
      checkoutAction: `${path}/checkout`,
      settledText: view.balanceOere < 0 ? `${t.nothingToPay} ${t.creditBalance(formatOere(-view.balanceOere, lang))}` : t.nothingToPay,
    }));
  };

  // --------------------------------------------------------------------------------------------------------------
  // Pages

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/assets/pay.css', async (_req, reply) =>
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'public, max-age=3600').header('X-Content-Type-Options', 'nosniff').send(PAY_CSS),
  );

  app.get('/', async (req, reply) => codePage(reply, 200, langOf(req), '', null));

  app.post<{ Body: Record<string, string> | undefined }>('/code', async (req, reply) => {
    const lang = langOf(req);
    const t = TEXTS[lang];
    const typed = String(req.body?.code ?? '').slice(0, 40);
    const code = normalizePaymentCode(typed);
    // A code that cannot exist costs no look-up and no token: it is a typo, answered at once.
    if (!code) return codePage(reply, 400, lang, typed, t.codeInvalid);
    const slot = limiter.take(req.ip);
    if (!slot.allowed) {
      reply.header('Retry-After', String(slot.retryAfterSeconds));
      return codePage(reply, 429, lang, typed, t.codeLimited(slot.retryAfterSeconds));
    }
    const view = await deps.db.read((sql) => loadPayView(sql, { code }));
    if (!view) {
      limiter.miss();
      return codePage(reply, 404, lang, typed, t.codeUnknown);
    }
    return reply.redirect(`/p/${view.reference}?lang=${lang}`, 303);
  });

  app.get<{ Params: { reference: string } }>('/p/:reference', async (req, reply) => {
    const view = await deps.db.read((sql) => loadPayView(sql, { reference: req.params.reference }));
    if (!view) return notFoundPage(reply, langOf(req));
    return invoicePage(reply, view, langOf(req, view.customerLanguage));
  });

  app.post<{ Params: { reference: string }; Body: Record<string, string> | undefined }>('/p/:reference/checkout', async (req, reply) => {
    const lang = langOf(req);
    const method = req.body?.method;
    if (method !== 'card' && method !== 'mobilepay') return reply.redirect(`/p/${req.params.reference}?lang=${lang}`, 303);
    let started;
    try {
      started = await startCheckout({ db: deps.db, provider: deps.provider, payBaseUrl: base }, req.params.reference, method, lang);
    } catch (err) {
      req.log.error({ err }, 'the payment provider could not open a checkout');
      const view = await deps.db.read((sql) => loadPayView(sql, { reference: req.params.reference }));
      if (!view) throw err;
      return invoicePage(reply, view, lang, TEXTS[lang].providerUnavailable, 502);
    }
    if (started.kind === 'unknown_link') return notFoundPage(reply, lang);
    // Paid meanwhile: back to the invoice, which now says so.
    if (started.kind === 'nothing_to_pay') return reply.redirect(`/p/${req.params.reference}?lang=${lang}`, 303);
    return reply.redirect(started.url, 303);
  });

  app.get<{ Params: { reference: string }; Querystring: { session?: string; lang?: string } }>('/p/:reference/return', async (req, reply) => {
    const { reference } = req.params;
    const [view, status] = await deps.db.read(async (sql) => [
      await loadPayView(sql, { reference }),
      await checkoutStatus(sql, reference, String(req.query.session ?? '')),
    ] as const);
    const lang = langOf(req, view?.customerLanguage);
    if (!view || !status) return notFoundPage(reply, lang);
    const t = TEXTS[lang];
    const path = `/p/${reference}`;
    const layout = (title: string, refresh?: number): LayoutInput => ({
      lang, title, brand: view.creditorName, switchHref: switchHref(`${path}/return?session=${encodeURIComponent(String(req.query.session))}`, lang),
      logoSrc: view.logoSha256 ? `${path}/logo/${view.logoSha256}` : null,
      ...(refresh ? { refreshSeconds: refresh } : {}),
    });
    if (status.status === 'succeeded') {
      const lines = [
        t.returnSucceededText(formatOere(status.paidOere ?? status.amountOere, lang), view.invoiceNumber),
        view.balanceOere > 0 ? t.returnRemaining(formatOere(view.balanceOere, lang)) : t.returnPaidInFull,
      ];
      return html(reply, 200, renderPage('return', layout(t.returnSucceeded), {
        heading: t.returnSucceeded, lines, tryAgainHref: null, backHref: `${path}?lang=${lang}`,
      }));
    }
    if (status.status === 'failed') {
      return html(reply, 200, renderPage('return', layout(t.returnFailed), {
        heading: t.returnFailed, lines: [t.returnFailedText], tryAgainHref: `${path}?lang=${lang}`, backHref: null,
      }));
    }
    return html(reply, 200, renderPage('return', layout(t.returnProcessing, PROCESSING_REFRESH_S), {
      heading: t.returnProcessing, lines: [t.returnProcessingText], tryAgainHref: null, backHref: `${path}?lang=${lang}`,
    }));
  });

  // --------------------------------------------------------------------------------------------------------------
  // Provider callbacks: JSON in, JSON out. Only these book payments.

  // A provider's callbacks are answered in the API's error envelope, with the request's id to quote.
  const callbackError = (reply: FastifyReply, status: number, code: string, message: string) =>
    reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message, requestId: reply.request.id } });

  app.post<{ Params: { provider: string } }>('/callbacks/:provider', async (req, reply) => {
    if (req.params.provider !== deps.provider.name) return callbackError(reply, 404, 'route_not_found', 'No such callback.');
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (!deps.provider.verifyCallback({ headers: req.headers, rawBody })) {
      req.log.warn('refused a provider callback without a valid signature');
      return callbackError(reply, 401, 'invalid_signature', 'The callback does not carry a valid, current signature.');
    }
    let handled: HandledEvent;
    try {
      const event = deps.provider.parseEvent(rawBody);
      handled = await deps.db.tx((tx) => handleProviderEvent(tx, { clock: deps.clock }, deps.provider.name, event));
    } catch (err) {
      if (err instanceof InvalidProviderEvent) return callbackError(reply, 400, 'invalid_event', err.message);
      if (err instanceof UnknownCheckoutSession) {
        // Signed by the provider but about a checkout this service never opened: money may have moved, so the
        // provider is told to keep it (and retry) and an operator is alerted.
        req.log.error({ err }, 'a provider event names an unknown checkout');
        return callbackError(reply, 404, 'checkout_session_not_found', err.message);
      }
      if (err instanceof DomainError) {
        req.log.error({ err, code: err.code }, 'a provider event could not be booked');
        return callbackError(reply, err.status, err.code, err.message);
      }
      throw err;
    }
    if (handled.effect === 'booked' && handled.paymentId && deps.receiptDispatch) {
      await deps.receiptDispatch.dispatch(handled.paymentId).catch((err: unknown) =>
        req.log.error({ err }, 'receipt hand-off failed; the payment is booked and the housekeeping loop renders its receipt'),
      );
    }
    return reply.code(200).send({ received: true, effect: handled.effect });
  });

  payPageLogoRoute(app, deps.db);
  deps.providerRoutes?.(app);
  if (deps.portal) registerPortalRoutes(app, { db: deps.db, clock: deps.clock, payBaseUrl: base, trustProxy: deps.trustProxy ?? false }, deps.portal);
  // The test provider's pages of the start links (verification, card setup, accounting connection).
  if (deps.providerRoutes) registerStartLinkPages(app, deps.db);

  app.setNotFoundHandler((req, reply) => {
    if (req.url.startsWith('/callbacks/')) return callbackError(reply, 404, 'route_not_found', 'No such callback.');
    return notFoundPage(reply, langOf(req));
  });

  frameworkError = (err, req, reply) => {
    reply.header('Request-Id', req.id);
    // A path that cannot be decoded names nothing there is; any other refusal of the framework's is a bad request.
    const [status, code, message] = err.code === 'FST_ERR_BAD_URL'
      ? [404, 'route_not_found', 'The request path cannot be decoded.']
      // The router could not ask the database which portal a host names (portal-host.ts logs why).
      : err.code === 'FST_ERR_ASYNC_CONSTRAINT'
        ? [500, 'internal_error', 'The request could not be handled; retry later.']
        : [400, 'invalid_request', 'The request could not be read.'];
    if (req.url.startsWith('/callbacks/')) void callbackError(reply, status, code, message);
    else void messagePage(reply, status, pickLanguage(undefined, req.headers['accept-language']));
  };

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'request failed');
    if (req.url.startsWith('/callbacks/')) {
      const code = status === 500 ? 'internal_error' : (FRAMEWORK_ERROR_CODES[status] ?? 'invalid_request');
      return callbackError(reply, status, code, status === 500 ? 'The callback could not be handled; retry later.' : err.message);
    }
    return messagePage(reply, status, pickLanguage(undefined, req.headers['accept-language']));
  });

  await app.ready();
  return app;
}
