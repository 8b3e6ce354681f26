import type { FastifyInstance } from 'fastify';
import { PORTAL_SUBSCRIPTION_ACTIONS } from '../change-portal-subscription.ts';
import { loadPortalOverview } from '../load-portal-overview.ts';
import { portalLanguage, portalRoute, whereOf, type PortalContext } from '../portal-context.ts';
import { cookieOf, SESSION_COOKIE } from '../portal-cookies.ts';
import { withSessionCsrfSecret } from '../portal-csrf.ts';
import { loadPortalSession } from '../portal-session.ts';
import { PORTAL_TEXTS } from '../portal-texts.ts';
import { homePage, notFoundPage, signInPage } from '../portal-views.ts';

/** The portal's front page: the sign-in form, or for a signed-in browser its invoices (and what it has just done). */
export function portalHomeRoutes(app: FastifyInstance, ctx: PortalContext): void {
  portalRoute(app, 'GET', '', {}, async (req, reply) => {
    const { base, portal } = await whereOf(ctx, req);
    if (!portal) return notFoundPage(reply, base, portalLanguage(req));
    const session = await ctx.db.read((sql) => loadPortalSession(sql, portal.organizationId, cookieOf(req, SESSION_COOKIE)));
    if (!session) return signInPage(reply, 200, base, portal, portalLanguage(req));
    withSessionCsrfSecret(req, ctx.keyring, session);
    const lang = portalLanguage(req, session.customers[0]!.language);
    const done = req.query.done;
    const notice = done && (PORTAL_SUBSCRIPTION_ACTIONS as readonly string[]).includes(done) ? PORTAL_TEXTS[lang].actionDone[done]! : null;
    const overview = await ctx.db.read((sql) =>
      loadPortalOverview(sql, { clock: ctx.clock }, portal.organizationId, session.customers, portal.subscriptionSelfService));
    return homePage(reply, base, portal, overview, lang, notice);
  });
}
