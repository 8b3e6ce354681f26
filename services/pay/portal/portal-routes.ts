import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WORK } from '../../../contracts/workflows.ts';
import type { DocumentStore } from '../../documents/document-store.ts';
import { createPostgresDocumentStore } from '../../documents/postgres-document-store.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Keyring } from '../../shared/crypto.ts';
import type { Db } from '../../shared/db.ts';
import type { EngineClient } from '../../shared/engine-client.ts';
import { DomainError } from '../../shared/errors.ts';
import { formatOere } from '../../shared/money.ts';
import { formatDate, pickLanguage, type Language } from '../texts.ts';
import { changePortalSubscription, PORTAL_SUBSCRIPTION_ACTIONS, type PortalSubscriptionAction } from './change-portal-subscription.ts';
import { findActivePortal, findPortalLogo, type Portal } from './find-portal.ts';
import { loadPortalOverview, type CustomerOverview } from './load-portal-overview.ts';
import { portalInvoicePdf, portalInvoiceStatus, portalPaymentUrl } from './portal-invoice.ts';
import { ON_PORTAL_HOST, PORTAL_HOST_CONSTRAINT, portalHostConstraint, portalOfHostRequest, requestHost, type RequestHost } from './portal-host.ts';
import { PORTAL_CSS, renderPortalPage, themeCss, type CustomerSection, type InvoiceItem, type PortalLayout } from './portal-pages.ts';
import { endPortalSession, loadPortalSession, type PortalSession } from './portal-session.ts';
import { PORTAL_TEXTS } from './portal-texts.ts';
import { confirmTokenMatches, confirmTokenOf, csrfTokenMatches, csrfTokenOf, newPortalToken, portalTokenHash } from './portal-tokens.ts';
import { redeemSignInLink, SESSION_HOURS, signInLinkIsValid } from './redeem-sign-in-link.ts';
import { requestSignInLink, type SignInLimits } from './request-sign-in-link.ts';
import { sendHtmlPage } from '../html-page.ts';

/** What the customer portal needs beyond the pay service's own dependencies. */
export interface PortalDeps {
  /** Customers' e-mail blind index; the pending link's token at rest; CSRF tokens. */
  keyring: Keyring;
  /** PORTAL_BASE_DOMAIN: portals are also served at `<subdomain>.<baseDomain>` (by the Host header). */
  baseDomain?: string | undefined;
  documents?: DocumentStore;
  /**
   * Starts a requested sign-in link's mail (PortalSignInMail) and a resumed subscription's due period at once;
   * without it both wait for the housekeeping loop, which finds them in the wake index.
   */
  engine?: EngineClient;
  limits?: SignInLimits;
}

interface PayContext {
  db: Db;
  clock: Clock;
  payBaseUrl: string;
  /** PAY_TRUST_PROXY: the request's host is X-Forwarded-Host (portal-host.ts, requestHost). */
  trustProxy?: boolean;
}

const COOKIE = 'portal_session';
/** The confirmation page's own cookie against login CSRF (portal-tokens.ts, confirmTokenOf). */
const CONFIRM_COOKIE = 'portal_confirm';
/** As long as a link lives (request-sign-in-link.ts). */
const CONFIRM_COOKIE_SECONDS = 15 * 60;
const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');
const EMAIL = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+\.[^\s@<>,;:"()[\]\\]+$/;

type Params = { subdomain: string };
type Form = Record<string, string> | undefined;
type Query = Record<string, string | undefined>;
type PortalRequest<P> = FastifyRequest<{ Params: P; Body: Form; Querystring: Query }>;

/** Where a request is: the portal (none when unknown or inactive), the base of its links, and the host it came for. */
interface Where {
  base: string;
  portal: Portal | undefined;
  host: RequestHost;
}

function cookieOf(req: FastifyRequest, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The customer portal's pages on the pay service (docs/customer-portal.md): sign-in by a one-time e-mailed link, the
 * debtor's invoices, balance, PDFs and payment, and with self-service their subscriptions. Every page is served at
 * `/portal/:subdomain/…` and, on a host that names an active portal (portal-host.ts), at the host's root; an inactive
 * or unknown portal answers 404 at the path form everywhere but its stylesheet (its host is no portal's host).
 */
export function registerPortalRoutes(app: FastifyInstance, pay: PayContext, deps: PortalDeps): void {
  const { db, clock } = pay;
  const documents = deps.documents ?? createPostgresDocumentStore();
  const payBase = pay.payBaseUrl.replace(/\/+$/, '');
  const trustProxy = pay.trustProxy ?? false;
  // `<subdomain>.<PORTAL_BASE_DOMAIN>` and verified custom domains: the router asks the database which portal a host
  // names (portal-host.ts), and the portal's root routes below answer only there.
  app.addConstraintStrategy(portalHostConstraint({
    db, baseDomain: deps.baseDomain, payHostname: new URL(payBase).hostname, trustProxy, log: app.log,
  }));
  const secureCookies = payBase.startsWith('https:');

  /**
   * The portal of a request: on a portal's host, the one the router found (links at the host's root); else the one at
   * `/portal/<subdomain>` (links under that).
   */
  const whereOf = async (req: FastifyRequest): Promise<Where> => {
    const onHost = portalOfHostRequest(req.raw);
    if (onHost) return { base: '', portal: onHost.portal, host: onHost.host };
    const sub = ((req.params as Partial<Params>).subdomain ?? '').toLowerCase();
    return { base: `/portal/${sub}`, portal: await db.read((sql) => findActivePortal(sql, sub)), host: requestHost(req.raw, trustProxy) };
  };

  /** Each page at both addresses: `/portal/<subdomain><path>`, and `<path>` on a portal's own host. */
  const route = <P extends object>(method: 'GET' | 'POST', path: string, handler: (req: PortalRequest<P>, reply: FastifyReply) => Promise<unknown>) => {
    app.route<{ Params: P & Partial<Params>; Body: Form; Querystring: Query }>({ method, url: `/portal/:subdomain${path}`, handler });
    app.route<{ Params: P; Body: Form; Querystring: Query }>({
      method, url: path || '/', constraints: { [PORTAL_HOST_CONSTRAINT]: ON_PORTAL_HOST }, handler,
    });
  };
  const homeOf = (base: string) => base || '/';
  const langOf = (req: FastifyRequest, fallback?: Language | null): Language => {
    const q = req.query as Record<string, unknown> | undefined;
    const b = req.body as Record<string, unknown> | undefined;
    return pickLanguage(b?.lang ?? q?.lang, req.headers['accept-language'], fallback ?? undefined);
  };
  const withLang = (href: string, lang: Language) => `${href}${href.includes('?') ? '&' : '?'}lang=${lang}`;

  const html = (reply: FastifyReply, status: number, body: string): FastifyReply => sendHtmlPage(reply, status, body, CSP);

  const layoutOf = (req: FastifyRequest, base: string, portal: Portal | undefined, lang: Language, title: string, session?: PortalSession): PortalLayout => {
    const t = PORTAL_TEXTS[lang];
    return {
      lang,
      title,
      orgName: portal?.organizationName ?? t.portalName,
      showService: portal !== undefined,
      palette: portal?.palette ?? 'lys',
      logoSrc: portal?.logoSha256 ? `${base}/logo/${portal.logoSha256}` : null,
      cssHref: `${base}/portal.css`,
      themeHref: `${base}/theme.css`,
      switchHref: `${homeOf(base)}?lang=${t.otherLanguage.code}`,
      signOut: session ? { action: `${base}/sign-out`, csrf: csrfTokenOf(deps.keyring, session.hash) } : null,
    };
  };

  const message = (
    req: FastifyRequest, reply: FastifyReply, status: number, base: string, portal: Portal | undefined, lang: Language,
    heading: string, text: string, link: { href: string; text: string } | null,
  ) =>
    html(reply, status, renderPortalPage('portal-message', layoutOf(req, base, portal, lang, heading), {
      heading, text, linkHref: link?.href ?? null, linkText: link?.text ?? '',
    }));

  /** The same page for an unknown and an inactive portal: nothing tells them apart. */
  const notFound = (req: FastifyRequest, reply: FastifyReply, base: string, lang: Language) => {
    const t = PORTAL_TEXTS[lang];
    return message(req, reply, 404, base, undefined, lang, t.notFoundTitle, t.notFoundText, null);
  };

  const signInPage = (
    req: FastifyRequest, reply: FastifyReply, status: number, base: string, portal: Portal, lang: Language,
    opts: { notice?: string | null; email?: string; error?: string | null } = {},
  ) => {
    const t = PORTAL_TEXTS[lang];
    return html(reply, status, renderPortalPage('portal-sign-in', layoutOf(req, base, portal, lang, t.signInTitle), {
      notice: opts.notice ?? null, intro: t.signInIntro(portal.organizationName), action: `${base}/sign-in`,
      email: opts.email ?? '', error: opts.error ?? null,
    }));
  };

  const sectionOf = (o: CustomerOverview, base: string, lang: Language): CustomerSection => {
    const t = PORTAL_TEXTS[lang];
    const item = (inv: CustomerOverview['open'][number]): InvoiceItem => ({
      number: inv.number!,
      heading: t.invoiceHeading(inv.number!),
      issueDate: inv.issueDate ? formatDate(inv.issueDate, lang) : '',
      dueDate: inv.dueDate ? formatDate(inv.dueDate, lang) : t.noDueDate,
      total: formatOere(inv.grossOere, lang),
      balance: formatOere(inv.balanceOere, lang),
      status: t.statusText[portalInvoiceStatus(inv, o.balance.asOf)] ?? inv.status,
      pdfHref: `${base}/invoices/${inv.id}/pdf`,
      pdfLabel: t.downloadPdf(inv.number!),
      payHref: inv.status !== 'paid' && inv.balanceOere > 0 ? `${base}/invoices/${inv.id}/pay` : null,
      payLabel: t.pay(inv.number!),
      payShort: t.payShort,
    });
    const actionsOf = (status: string): PortalSubscriptionAction[] =>
      status === 'active' ? ['pause', 'cancel'] : status === 'paused' ? ['resume', 'cancel'] : [];
    return {
      name: o.customer.name,
      outstanding: formatOere(o.balance.outstandingOere, lang),
      overdue: formatOere(o.balance.overdueOere, lang),
      credit: o.balance.creditOere > 0 ? formatOere(o.balance.creditOere, lang) : null,
      open: o.open.map(item),
      paid: o.paid.map(item),
      subscriptions: (o.subscriptions ?? []).map((s) => ({
        id: s.id,
        name: s.name,
        status: t.subscriptionStatus[s.status] ?? s.status,
        nextInvoice: s.nextInvoiceDate ? formatDate(s.nextInvoiceDate, lang) : '–',
        price: formatOere(s.lines.reduce((sum, l) => sum + l.grossOere, 0), lang),
        actions: actionsOf(s.status).map((a) => ({
          href: `${base}/subscriptions/${s.id}/${a}`,
          label: t[a](s.name),
          short: t[`${a}Short`],
          style: a === 'cancel' ? 'secondary' as const : 'primary' as const,
        })),
      })),
    };
  };

  const homePage = async (
    req: FastifyRequest, reply: FastifyReply, base: string, portal: Portal, session: PortalSession, lang: Language,
    notice: string | null, status = 200,
  ) => {
    const t = PORTAL_TEXTS[lang];
    const overview = await db.read((sql) =>
      loadPortalOverview(sql, { clock }, portal.organizationId, session.customers, portal.subscriptionSelfService));
    return html(reply, status, renderPortalPage('portal-home', layoutOf(req, base, portal, lang, t.homeTitle, session), {
      notice,
      csrf: csrfTokenOf(deps.keyring, session.hash),
      selfService: portal.subscriptionSelfService,
      showCustomerNames: overview.length > 1,
      customers: overview.map((o) => sectionOf(o, base, lang)),
    }));
  };

  /** The portal and the signed-in session of a request; answers the request itself (404, or the sign-in page) when either is missing. */
  const signedIn = async (req: FastifyRequest, reply: FastifyReply) => {
    const { base, portal } = await whereOf(req);
    if (!portal) {
      await notFound(req, reply, base, langOf(req));
      return undefined;
    }
    const session = await db.read((sql) => loadPortalSession(sql, portal.organizationId, cookieOf(req, COOKIE)));
    if (!session) {
      const lang = langOf(req);
      await signInPage(req, reply, 401, base, portal, lang, { notice: PORTAL_TEXTS[lang].sessionEnded });
      return undefined;
    }
    return { base, portal, session, lang: langOf(req, session.customers[0]!.language) };
  };

  /** A POST of a signed-in page must carry the session's CSRF token. */
  const csrfOk = (req: FastifyRequest, session: PortalSession): boolean =>
    csrfTokenMatches(deps.keyring, session.hash, (req.body as Form)?.csrf);

  const csrfRefused = (req: FastifyRequest, reply: FastifyReply, base: string, portal: Portal, lang: Language) => {
    const t = PORTAL_TEXTS[lang];
    return message(req, reply, 403, base, portal, lang, t.errorTitle, t.csrfRefused, { href: withLang(homeOf(base), lang), text: t.homeTitle });
  };

  /**
   * Spending a link signs a browser in, so it must be this browser's own click on the confirmation page (login CSRF:
   * another site's form would sign the victim into the sender's account). Fetch metadata when the browser sends it;
   * an Origin of another host; and the confirmation page's cookie-bound token (portal-tokens.ts, confirmTokenOf),
   * which also covers browsers that send neither header. Our pages' `Referrer-Policy: no-referrer` makes browsers send
   * `Origin: null` on their own forms, so "null" alone proves nothing either way.
   */
  const sameOriginRequest = (req: FastifyRequest, host: RequestHost): boolean => {
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
    const origin = req.headers.origin;
    if (origin === undefined || origin === 'null') return true;
    try {
      // Compared as URLs of the same scheme, so a default port written or not makes no difference.
      const from = new URL(origin);
      return from.host === new URL(`${from.protocol}//${host.host}`).host;
    } catch {
      return false;
    }
  };

  const linkRefused = (req: FastifyRequest, reply: FastifyReply, base: string, portal: Portal, lang: Language) => {
    const t = PORTAL_TEXTS[lang];
    return message(req, reply, 410, base, portal, lang, t.linkInvalidTitle, t.linkInvalidText, { href: withLang(homeOf(base), lang), text: t.requestNewLink });
  };

  // ------------------------------------------------------------------------------------------------------------
  // Static: the stylesheet (the same for every portal), the portal's accent and its logo.

  const css = (reply: FastifyReply) =>
    reply.type('text/css; charset=utf-8').header('Cache-Control', 'public, max-age=3600').header('X-Content-Type-Options', 'nosniff').send(PORTAL_CSS);
  app.get('/portal/:subdomain/portal.css', async (_req, reply) => css(reply));
  app.get('/portal.css', { constraints: { [PORTAL_HOST_CONSTRAINT]: ON_PORTAL_HOST } }, async (_req, reply) => css(reply));

  route('GET', '/theme.css', async (req, reply) => {
    const { portal } = await whereOf(req);
    return reply.type('text/css; charset=utf-8').header('Cache-Control', 'no-cache').header('X-Content-Type-Options', 'nosniff')
      .send(themeCss(portal?.primaryColor ?? null));
  });

  route<{ sha256: string }>('GET', '/logo/:sha256', async (req, reply) => {
    const { base, portal } = await whereOf(req);
    const logo = portal && await db.read((sql) => findPortalLogo(sql, portal.organizationId, req.params.sha256));
    if (!portal || !logo) return notFound(req, reply, base, langOf(req));
    return reply
      .type(logo.mime)
      // Named by its hash, the image never changes; once it is no longer the current logo it is 404 here.
      .header('Cache-Control', 'public, max-age=86400, immutable')
      .header('X-Content-Type-Options', 'nosniff')
      // An SVG opened on its own runs nothing and loads nothing.
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
      .send(logo.content);
  });

  // ------------------------------------------------------------------------------------------------------------
  // Signing in and out

  route('GET', '', async (req, reply) => {
    const { base, portal } = await whereOf(req);
    if (!portal) return notFound(req, reply, base, langOf(req));
    const session = await db.read((sql) => loadPortalSession(sql, portal.organizationId, cookieOf(req, COOKIE)));
    if (!session) return signInPage(req, reply, 200, base, portal, langOf(req));
    const lang = langOf(req, session.customers[0]!.language);
    const done = req.query.done;
    const notice = done && (PORTAL_SUBSCRIPTION_ACTIONS as readonly string[]).includes(done) ? PORTAL_TEXTS[lang].actionDone[done]! : null;
    return homePage(req, reply, base, portal, session, lang, notice);
  });

  route('POST', '/sign-in', async (req, reply) => {
    const { base, portal, host } = await whereOf(req);
    const lang = langOf(req);
    const t = PORTAL_TEXTS[lang];
    if (!portal) return notFound(req, reply, base, lang);
    const email = String(req.body?.email ?? '').trim().slice(0, 254);
    if (!EMAIL.test(email)) return signInPage(req, reply, 400, base, portal, lang, { email, error: t.emailInvalid });
    const origin = base === '' ? `${new URL(payBase).protocol}//${host.host}` : payBase;
    const outcome = await db.tx((tx) =>
      requestSignInLink(tx, deps.keyring, {
        organizationId: portal.organizationId, email, clientAddress: req.ip, linkBase: `${origin}${base}/sign-in`, language: lang,
      }, deps.limits));
    if (outcome.kind === 'limited') {
      reply.header('Retry-After', String(outcome.retryAfterSeconds));
      return signInPage(req, reply, 429, base, portal, lang, { email, error: t.limitedText(outcome.retryAfterSeconds) });
    }
    // The same page, at once, whether or not the address is known: a known one must not be told apart by a slower
    // answer. The mail is durable from the commit on (wake index); the poke only starts it now rather than at the
    // housekeeping loop's next round, and it goes out after the answer, awaited by nobody.
    const answered = message(req, reply, 200, base, portal, lang, t.linkSentTitle, t.linkSentText, null);
    if (outcome.linkId && deps.engine) {
      const { engine } = deps;
      const target = WORK.portalSignInMail(outcome.linkId);
      setImmediate(() => {
        engine.poke(target).catch((err: unknown) =>
          req.log.warn({ err }, 'the sign-in mail could not be handed to the workflow engine now; the housekeeping loop sends it'));
      });
    }
    return answered;
  });

  route<{ token: string }>('GET', '/sign-in/:token', async (req, reply) => {
    const { base, portal } = await whereOf(req);
    const lang = langOf(req);
    const t = PORTAL_TEXTS[lang];
    if (!portal) return notFound(req, reply, base, lang);
    // Opening the link only asks: mail scanners that follow links must not spend it.
    const linkHash = portalTokenHash(req.params.token);
    if (!linkHash || !(await db.read((sql) => signInLinkIsValid(sql, portal.organizationId, req.params.token)))) {
      return linkRefused(req, reply, base, portal, lang);
    }
    // This browser's confirmation cookie (kept when it has one: the link opened in two tabs works in either).
    const kept = cookieOf(req, CONFIRM_COOKIE);
    const browserToken = kept && portalTokenHash(kept) ? kept : newPortalToken();
    reply.header('Set-Cookie', [
      `${CONFIRM_COOKIE}=${browserToken}`, `Path=${base}/sign-in`, `Max-Age=${CONFIRM_COOKIE_SECONDS}`, 'HttpOnly', 'SameSite=Strict',
      ...(secureCookies || req.protocol === 'https' ? ['Secure'] : []),
    ].join('; '));
    return html(reply, 200, renderPortalPage('portal-confirm', layoutOf(req, base, portal, lang, t.confirmTitle), {
      text: t.confirmText(portal.organizationName), action: `${base}/sign-in/${req.params.token}`,
      confirm: confirmTokenOf(deps.keyring, linkHash, browserToken),
    }));
  });

  route<{ token: string }>('POST', '/sign-in/:token', async (req, reply) => {
    const { base, portal, host } = await whereOf(req);
    const lang = langOf(req);
    if (!portal) return notFound(req, reply, base, lang);
    const linkHash = portalTokenHash(req.params.token);
    if (!linkHash) return linkRefused(req, reply, base, portal, lang);
    // Nothing is spent unless this browser confirmed on this site's own page.
    if (!sameOriginRequest(req, host) || !confirmTokenMatches(deps.keyring, linkHash, cookieOf(req, CONFIRM_COOKIE), req.body?.confirm)) {
      const t = PORTAL_TEXTS[lang];
      return message(req, reply, 403, base, portal, lang, t.errorTitle, t.csrfRefused,
        { href: withLang(`${base}/sign-in/${req.params.token}`, lang), text: t.confirmTitle });
    }
    const redeemed = await db.tx((tx) => redeemSignInLink(tx, portal.organizationId, req.params.token));
    if (!redeemed) return linkRefused(req, reply, base, portal, lang);
    const cookie = [
      `${COOKIE}=${redeemed.sessionToken}`, `Path=${homeOf(base)}`, `Max-Age=${SESSION_HOURS * 3600}`, 'HttpOnly', 'SameSite=Lax',
      ...(secureCookies || req.protocol === 'https' ? ['Secure'] : []),
    ].join('; ');
    return reply.header('Set-Cookie', cookie).header('Cache-Control', 'no-store').redirect(withLang(homeOf(base), lang), 303);
  });

  route('POST', '/sign-out', async (req, reply) => {
    const ctx = await signedIn(req, reply);
    if (!ctx) return reply;
    const { base, portal, session } = ctx;
    const lang = langOf(req);
    if (!csrfOk(req, session)) return csrfRefused(req, reply, base, portal, lang);
    await db.tx((tx) => endPortalSession(tx, portal.organizationId, session.hash));
    reply.header('Set-Cookie', `${COOKIE}=; Path=${homeOf(base)}; Max-Age=0; HttpOnly; SameSite=Lax${secureCookies || req.protocol === 'https' ? '; Secure' : ''}`);
    return signInPage(req, reply, 200, base, portal, lang, { notice: PORTAL_TEXTS[lang].signedOutText });
  });

  // ------------------------------------------------------------------------------------------------------------
  // The debtor's invoices and subscriptions

  route<{ invoiceId: string }>('GET', '/invoices/:invoiceId/pdf', async (req, reply) => {
    const ctx = await signedIn(req, reply);
    if (!ctx) return reply;
    const pdf = await db.read((sql) => portalInvoicePdf(sql, documents, ctx.portal.organizationId, ctx.session, req.params.invoiceId));
    if (!pdf) return notFound(req, reply, ctx.base, ctx.lang);
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="${ctx.lang === 'da' ? 'faktura' : 'invoice'}-${pdf.number}.pdf"`)
      .header('Cache-Control', 'no-store')
      .header('X-Content-Type-Options', 'nosniff')
      .send(pdf.bytes);
  });

  route<{ invoiceId: string }>('GET', '/invoices/:invoiceId/pay', async (req, reply) => {
    const ctx = await signedIn(req, reply);
    if (!ctx) return reply;
    const url = await db.tx((tx) => portalPaymentUrl(tx, ctx.portal.organizationId, ctx.session, req.params.invoiceId, payBase));
    if (!url) return notFound(req, reply, ctx.base, ctx.lang);
    return reply.header('Cache-Control', 'no-store').redirect(withLang(url, ctx.lang), 303);
  });

  route<{ subscriptionId: string; action: string }>('POST', '/subscriptions/:subscriptionId/:action', async (req, reply) => {
    const ctx = await signedIn(req, reply);
    if (!ctx) return reply;
    const { base, portal, session, lang } = ctx;
    const action = req.params.action as PortalSubscriptionAction;
    // Without self-service (or for an action there is not) the route is not there.
    if (!portal.subscriptionSelfService || !PORTAL_SUBSCRIPTION_ACTIONS.includes(action)) return notFound(req, reply, base, lang);
    if (!csrfOk(req, session)) return csrfRefused(req, reply, base, portal, lang);
    let changed;
    try {
      changed = await db.tx((tx) => changePortalSubscription(tx, { clock }, portal.organizationId, session, req.params.subscriptionId, action));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'invalid_transition') {
        return homePage(req, reply, base, portal, session, lang, PORTAL_TEXTS[lang].actionRefused, 422);
      }
      throw err;
    }
    if (!changed) return notFound(req, reply, base, lang);
    // As the API does after a resume: a period that is due now is run at once rather than at the next wake-up.
    if (action === 'resume' && deps.engine && changed.nextInvoiceDate !== null && changed.nextInvoiceDate <= (await clock.today(portal.organizationId))) {
      await deps.engine.poke(WORK.subscriptionSchedule(portal.organizationId, changed.id)).catch((err: unknown) =>
        req.log.warn({ err }, 'the resumed subscription could not be poked; the housekeeping loop runs it'));
    }
    return reply.redirect(`${homeOf(base)}?lang=${lang}&done=${action}`, 303);
  });
}
