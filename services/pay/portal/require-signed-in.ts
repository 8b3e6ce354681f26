import type { FastifyReply, FastifyRequest } from 'fastify';
import { PORTAL_TEXTS } from './portal-texts.ts';
import { loadPortalSession } from './portal-session.ts';
import { portalLanguage, whereOf, type PortalContext } from './portal-context.ts';
import { cookieOf, SESSION_COOKIE } from './portal-cookies.ts';
import { withSessionCsrfSecret } from './portal-csrf.ts';
import { notFoundPage, signInPage } from './portal-views.ts';

/**
 * The pre-handler of the signed-in pages: the request's portal and session (`req.portalPage`), and the session's CSRF
 * secret; it answers the request itself when either is missing (404 for the portal, the sign-in page, 401, for the
 * session). The page's language is the request's, else the first customer's; `sessionLanguage: false` keeps to the
 * request's (signing out: the session is about to end).
 */
export function requireSignedIn(ctx: PortalContext, opts: { sessionLanguage?: boolean } = {}) {
  return async function requireSignedIn(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const { base, portal } = await whereOf(ctx, req);
    if (!portal) return notFoundPage(reply, base, portalLanguage(req));
    const session = await ctx.db.read((sql) => loadPortalSession(sql, portal.organizationId, cookieOf(req, SESSION_COOKIE)));
    if (!session) {
      const lang = portalLanguage(req);
      return signInPage(reply, 401, base, portal, lang, { notice: PORTAL_TEXTS[lang].sessionEnded });
    }
    withSessionCsrfSecret(req, ctx.keyring, session);
    const lang = opts.sessionLanguage === false ? portalLanguage(req) : portalLanguage(req, session.customers[0]!.language);
    req.portalPage = { base, portal, session, lang };
    return undefined;
  };
}
