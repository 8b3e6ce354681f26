import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WORK } from '../../../../contracts/workflows.ts';
import { DomainError } from '../../../shared/errors.ts';
import { changePortalSubscription, PORTAL_SUBSCRIPTION_ACTIONS, type PortalSubscriptionAction } from '../change-portal-subscription.ts';
import { loadPortalOverview } from '../load-portal-overview.ts';
import { homeOf, portalRoute, signedInPage, type PortalContext } from '../portal-context.ts';
import { PORTAL_TEXTS } from '../portal-texts.ts';
import { homePage, notFoundPage } from '../portal-views.ts';
import { requireSignedIn } from '../require-signed-in.ts';

type Params = { subscriptionId: string; action: string };

/** Without self-service (or for an action there is not) the route is not there: 404 before the CSRF token is looked at. */
async function requireSelfServiceAction(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const { base, portal, lang } = signedInPage(req);
  const { action } = req.params as Params;
  if (!portal.subscriptionSelfService || !(PORTAL_SUBSCRIPTION_ACTIONS as readonly string[]).includes(action)) return notFoundPage(reply, base, lang);
  return undefined;
}

/** With self-service: `POST /subscriptions/{id}/{pause|resume|cancel}`, the change the API makes, then back home. */
export function portalSubscriptionRoutes(app: FastifyInstance, ctx: PortalContext): void {
  const { db, clock } = ctx;
  const preHandler = [requireSignedIn(ctx), requireSelfServiceAction, app.csrfProtection.bind(app)];

  portalRoute<Params>(app, 'POST', '/subscriptions/:subscriptionId/:action', { preHandler }, async (req, reply) => {
    const { base, portal, session, lang } = signedInPage(req);
    const action = req.params.action as PortalSubscriptionAction;
    let changed;
    try {
      changed = await db.tx((tx) => changePortalSubscription(tx, { clock }, portal.organizationId, session, req.params.subscriptionId, action));
    } catch (err) {
      if (err instanceof DomainError && err.code === 'invalid_transition') {
        const overview = await db.read((sql) =>
          loadPortalOverview(sql, { clock }, portal.organizationId, session.customers, portal.subscriptionSelfService));
        return homePage(reply, base, portal, overview, lang, PORTAL_TEXTS[lang].actionRefused, 422);
      }
      throw err;
    }
    if (!changed) return notFoundPage(reply, base, lang);
    // As the API does after a resume: a period that is due now is run at once rather than at the next wake-up.
    if (action === 'resume' && ctx.engine && changed.nextInvoiceDate !== null && changed.nextInvoiceDate <= (await clock.today(portal.organizationId))) {
      await ctx.engine.poke(WORK.subscriptionSchedule(portal.organizationId, changed.id)).catch((err: unknown) =>
        req.log.warn({ err }, 'the resumed subscription could not be poked; the housekeeping loop runs it'));
    }
    return reply.redirect(`${homeOf(base)}?lang=${lang}&done=${action}`, 303);
  });
}
