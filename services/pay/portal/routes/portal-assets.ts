import type { FastifyInstance } from 'fastify';
import { sendStylesheet } from '../../plugins/page-policy.ts';
import { findPortalLogo } from '../find-portal.ts';
import { portalLanguage, portalRoute, whereOf, type PortalContext } from '../portal-context.ts';
import { ON_PORTAL_HOST, PORTAL_HOST_CONSTRAINT } from '../portal-host.ts';
import { PORTAL_CSS, themeCss } from '../portal-pages.ts';
import { notFoundPage } from '../portal-views.ts';

/**
 * The portal's static parts: the stylesheet (the same for every portal, served for an unknown one too), the
 * portal's accent (`theme.css`, empty without one) and its logo.
 */
export function portalAssetRoutes(app: FastifyInstance, ctx: PortalContext): void {
  app.get('/portal/:subdomain/portal.css', async (_req, reply) => sendStylesheet(reply, PORTAL_CSS));
  app.get('/portal.css', { constraints: { [PORTAL_HOST_CONSTRAINT]: ON_PORTAL_HOST } }, async (_req, reply) => sendStylesheet(reply, PORTAL_CSS));

  portalRoute(app, 'GET', '/theme.css', {}, async (req, reply) => {
    const { portal } = await whereOf(ctx, req);
    return sendStylesheet(reply, themeCss(portal?.primaryColor ?? null), 'no-cache');
  });

  portalRoute<{ sha256: string }>(app, 'GET', '/logo/:sha256', {}, async (req, reply) => {
    const { base, portal } = await whereOf(ctx, req);
    const logo = portal && await ctx.db.read((sql) => findPortalLogo(sql, portal.organizationId, req.params.sha256));
    if (!portal || !logo) return notFoundPage(reply, base, portalLanguage(req));
    return reply
      .type(logo.mime)
      // Named by its hash, the image never changes; once it is no longer the current logo it is 404 here.
      .header('Cache-Control', 'public, max-age=86400, immutable')
      .header('X-Content-Type-Options', 'nosniff')
      // An SVG opened on its own runs nothing and loads nothing.
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
      .send(logo.content);
  });
}
