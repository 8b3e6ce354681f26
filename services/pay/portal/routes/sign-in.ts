import type { FastifyInstance } from 'fastify';
import { WORK } from '../../../../contracts/workflows.ts';
import { homeOf, portalLanguage, portalRoute, signedInPage, whereOf, withLang, type PortalContext } from '../portal-context.ts';
import { clearSessionCookie, CONFIRM_COOKIE, cookieOf, setConfirmCookie, setSessionCookie } from '../portal-cookies.ts';
import { endPortalSession } from '../portal-session.ts';
import { PORTAL_TEXTS } from '../portal-texts.ts';
import { confirmTokenMatches, confirmTokenOf, newPortalToken, portalTokenHash } from '../portal-tokens.ts';
import { confirmPage, linkRefusedPage, messagePage, notFoundPage, signInPage } from '../portal-views.ts';
import { redeemSignInLink, signInLinkIsValid } from '../redeem-sign-in-link.ts';
import { requestSignInLink } from '../request-sign-in-link.ts';
import { requireSignedIn } from '../require-signed-in.ts';
import { sameOriginRequest } from '../same-origin-request.ts';

const EMAIL = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+\.[^\s@<>,;:"()[\]\\]+$/;

/**
 * Signing in by a one-time e-mailed link and out: `POST /sign-in` asks for a link, `GET /sign-in/{token}` shows its
 * confirmation page, `POST /sign-in/{token}` (this browser's press on that page) spends it and starts a session,
 * `POST /sign-out` ends it.
 */
export function portalSignInRoutes(app: FastifyInstance, ctx: PortalContext): void {
  const { db, keyring } = ctx;

  portalRoute(app, 'POST', '/sign-in', {}, async (req, reply) => {
    const { base, portal, host } = await whereOf(ctx, req);
    const lang = portalLanguage(req);
    const t = PORTAL_TEXTS[lang];
    if (!portal) return notFoundPage(reply, base, lang);
    const email = String(req.body?.email ?? '').trim().slice(0, 254);
    if (!EMAIL.test(email)) return signInPage(reply, 400, base, portal, lang, { email, error: t.emailInvalid });
    const origin = base === '' ? `${new URL(ctx.payBase).protocol}//${host.host}` : ctx.payBase;
    const outcome = await db.tx((tx) =>
      requestSignInLink(tx, keyring, {
        organizationId: portal.organizationId, email, clientAddress: req.ip, linkBase: `${origin}${base}/sign-in`, language: lang,
      }, ctx.limits));
    if (outcome.kind === 'limited') {
      reply.header('Retry-After', String(outcome.retryAfterSeconds));
      return signInPage(reply, 429, base, portal, lang, { email, error: t.limitedText(outcome.retryAfterSeconds) });
    }
    // The same page, at once, whether or not the address is known: a known one must not be told apart by a slower
    // answer. The mail is durable from the commit on (wake index); the poke only starts it now rather than at the
    // housekeeping loop's next round, and it goes out after the answer, awaited by nobody.
    const answered = messagePage(reply, 200, base, portal, lang, t.linkSentTitle, t.linkSentText, null);
    if (outcome.linkId && ctx.engine) {
      const { engine } = ctx;
      const target = WORK.portalSignInMail(outcome.linkId);
      setImmediate(() => {
        engine.poke(target).catch((err: unknown) =>
          req.log.warn({ err }, 'the sign-in mail could not be handed to the workflow engine now; the housekeeping loop sends it'));
      });
    }
    return answered;
  });

  portalRoute<{ token: string }>(app, 'GET', '/sign-in/:token', {}, async (req, reply) => {
    const { base, portal } = await whereOf(ctx, req);
    const lang = portalLanguage(req);
    if (!portal) return notFoundPage(reply, base, lang);
    // Opening the link only asks: mail scanners that follow links must not spend it.
    const linkHash = portalTokenHash(req.params.token);
    if (!linkHash || !(await db.read((sql) => signInLinkIsValid(sql, portal.organizationId, req.params.token)))) {
      return linkRefusedPage(reply, base, portal, lang);
    }
    // This browser's confirmation cookie (kept when it has one: the link opened in two tabs works in either).
    const kept = cookieOf(req, CONFIRM_COOKIE);
    const browserToken = kept && portalTokenHash(kept) ? kept : newPortalToken();
    setConfirmCookie(reply, ctx.secureCookies, base, browserToken);
    return confirmPage(reply, base, portal, lang, req.params.token, confirmTokenOf(keyring, linkHash, browserToken));
  });

  portalRoute<{ token: string }>(app, 'POST', '/sign-in/:token', {}, async (req, reply) => {
    const { base, portal, host } = await whereOf(ctx, req);
    const lang = portalLanguage(req);
    if (!portal) return notFoundPage(reply, base, lang);
    const linkHash = portalTokenHash(req.params.token);
    if (!linkHash) return linkRefusedPage(reply, base, portal, lang);
    // Nothing is spent unless this browser confirmed on this site's own page.
    if (!sameOriginRequest(req, host) || !confirmTokenMatches(keyring, linkHash, cookieOf(req, CONFIRM_COOKIE), req.body?.confirm)) {
      const t = PORTAL_TEXTS[lang];
      return messagePage(reply, 403, base, portal, lang, t.errorTitle, t.csrfRefused,
        { href: withLang(`${base}/sign-in/${req.params.token}`, lang), text: t.confirmTitle });
    }
    const redeemed = await db.tx((tx) => redeemSignInLink(tx, portal.organizationId, req.params.token));
    if (!redeemed) return linkRefusedPage(reply, base, portal, lang);
    setSessionCookie(reply, ctx.secureCookies, homeOf(base), redeemed.sessionToken);
    return reply.header('Cache-Control', 'no-store').redirect(withLang(homeOf(base), lang), 303);
  });

  portalRoute(app, 'POST', '/sign-out', { preHandler: [requireSignedIn(ctx, { sessionLanguage: false }), app.csrfProtection.bind(app)] }, async (req, reply) => {
    const { base, portal, session, lang } = signedInPage(req);
    await db.tx((tx) => endPortalSession(tx, portal.organizationId, session.hash));
    clearSessionCookie(reply, ctx.secureCookies, homeOf(base));
    return signInPage(reply, 200, base, portal, lang, { notice: PORTAL_TEXTS[lang].signedOutText });
  });
}
