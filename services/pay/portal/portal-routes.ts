import type { FastifyError, FastifyInstance } from 'fastify';
import type { DocumentStore } from '../../documents/document-store.ts';
import { createPostgresDocumentStore } from '../../documents/postgres-document-store.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Keyring } from '../../shared/crypto.ts';
import type { Db } from '../../shared/db.ts';
import type { EngineClient } from '../../shared/engine-client.ts';
import type { PortalContext } from './portal-context.ts';
import { registerPortalCookies } from './portal-cookies.ts';
import { isCsrfRefusal, registerPortalCsrf } from './portal-csrf.ts';
import { portalHostConstraint } from './portal-host.ts';
import { csrfRefusedPage } from './portal-views.ts';
import type { SignInLimits } from './request-sign-in-link.ts';
import { portalAssetRoutes } from './routes/portal-assets.ts';
import { portalHomeRoutes } from './routes/home.ts';
import { portalInvoiceRoutes } from './routes/invoices.ts';
import { portalSignInRoutes } from './routes/sign-in.ts';
import { portalSubscriptionRoutes } from './routes/subscriptions.ts';

/** What the customer portal needs beyond the pay service's own dependencies. */
export interface PortalDeps {
  /** Customers' e-mail blind index; the pending link's token at rest; CSRF secrets. */
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

/**
 * The customer portal's pages on the pay service (docs/customer-portal.md): sign-in by a one-time e-mailed link, the
 * debtor's invoices, balance, PDFs and payment, and with self-service their subscriptions. Every page is served at
 * `/portal/:subdomain/…` and, on a host that names an active portal (portal-host.ts), at the host's root; an inactive
 * or unknown portal answers 404 at the path form everywhere but its stylesheet (its host is no portal's host).
 *
 * The pages live in a context of their own: cookies (@fastify/cookie) and the signed-in forms' CSRF tokens
 * (@fastify/csrf-protection, portal-csrf.ts) are the portal's alone; a refused token is the portal's 403 page, any
 * other error goes on to the pay service's handler.
 */
export async function registerPortalRoutes(app: FastifyInstance, pay: PayContext, deps: PortalDeps): Promise<void> {
  const payBase = pay.payBaseUrl.replace(/\/+$/, '');
  const ctx: PortalContext = {
    db: pay.db,
    clock: pay.clock,
    keyring: deps.keyring,
    documents: deps.documents ?? createPostgresDocumentStore(),
    engine: deps.engine,
    limits: deps.limits,
    payBase,
    trustProxy: pay.trustProxy ?? false,
    secureCookies: payBase.startsWith('https:'),
  };
  // `<subdomain>.<PORTAL_BASE_DOMAIN>` and verified custom domains: the router asks the database which portal a host
  // names (portal-host.ts), and the portal's root routes answer only there.
  app.addConstraintStrategy(portalHostConstraint({
    db: ctx.db, baseDomain: deps.baseDomain, payHostname: new URL(payBase).hostname, trustProxy: ctx.trustProxy, log: app.log,
  }));

  await app.register(async (portal) => {
    portal.decorateRequest('portalPage', undefined);
    await registerPortalCookies(portal);
    await registerPortalCsrf(portal);
    portal.setErrorHandler((err: FastifyError, req, reply) => {
      if (!isCsrfRefusal(err) || !req.portalPage) throw err;
      const { base, portal: p, lang } = req.portalPage;
      return csrfRefusedPage(reply, base, p, lang);
    });

    portalAssetRoutes(portal, ctx);
    portalHomeRoutes(portal, ctx);
    portalSignInRoutes(portal, ctx);
    portalInvoiceRoutes(portal, ctx);
    portalSubscriptionRoutes(portal, ctx);
  });
}
