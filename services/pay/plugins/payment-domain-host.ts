import type { FastifyInstance } from 'fastify';
import type { Db } from '../../shared/db.ts';
import { normalizeHostName } from '../../domains/host-name.ts';
import { PAYMENT_DOMAIN_LIFECYCLE, VERIFIED_DOMAIN } from '../../domains/payment-domain-lifecycle.ts';

/** A path that can be a payment link on a payment domain: `/<reference>` (32 lowercase hex characters). */
const REFERENCE_PATH = /^\/([0-9a-f]{32})\/?$/;
/** The pay page of a link and what it loads or posts under its own path: checkout, return, logo. */
const PAY_PAGE_PATH = /^\/p\/([0-9a-f]{32})(?:\/checkout|\/return|\/logo\/[0-9a-f]{64})?\/?$/;
/** The pay page's style sheet (and any later asset): one file name, no traversal. */
const ASSET_PATH = /^\/assets\/[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9]+)*$/;

/**
 * An organisation's verified payment domain points at this service, and payment links on it are
 * `https://<domain>/<reference>` (services/payments/payment-links.ts). On such a host this service is that
 * organisation's pay page and nothing else:
 * - GET `/<reference>` of one of its links is sent on to the invoice's pay page, `/p/<reference>` on the same host
 *   (query kept), so the customer stays on the creditor's domain;
 * - `/p/<reference>` with its checkout, return and logo paths are served for its own links only;
 * - `/assets/*` (the page's style sheet) is served;
 * - everything else (another organisation's link, the code page, the customer portal, the test provider's pages,
 *   provider callbacks, health) is the service's not-found answer, as for a reference that does not exist.
 * Any other host (the pay service's own, a portal's) goes on as before. The Host is `req.hostname`: without its port,
 * and X-Forwarded-Host only behind a trusted proxy (PAY_TRUST_PROXY). A domain that is set but not verified is not
 * a payment domain here.
 *
 * Registered as an onRequest hook; Fastify's rewriteUrl (the portal's host routing) runs before it, so a path the
 * portal moved under `/portal/…` is refused here like any other portal path.
 */
export function servePaymentDomainLinks(app: FastifyInstance, db: Db, payBaseUrl?: string): void {
  // The pay service's own host is never a payment domain here, so its requests cost no look-up.
  const ownHost = payBaseUrl ? normalizeHostName(new URL(payBaseUrl).hostname) : undefined;
  app.addHook('onRequest', async (req, reply) => {
    // The Host as the domain is stored: lower case, no final dot. An address or a one-label name is never a domain.
    const host = normalizeHostName(req.hostname);
    if (!host || host === ownHost) return;
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    const reference = REFERENCE_PATH.exec(path)?.[1] ?? PAY_PAGE_PATH.exec(path)?.[1];
    const [domain] = await db.read((sql) => sql<{ owns_link: boolean }[]>`
      SELECT EXISTS (
        SELECT 1 FROM payment_links l WHERE l.organization_id = d.organization_id AND l.reference = ${reference ?? null}
      ) AS owns_link
      FROM payment_domains d
      WHERE d.domain = ${host} AND d.status IN ${PAYMENT_DOMAIN_LIFECYCLE.in(sql, [VERIFIED_DOMAIN])}`);
    if (!domain) return;

    if (ASSET_PATH.test(path)) return;
    const owned = reference !== undefined && domain.owns_link;
    if (owned && PAY_PAGE_PATH.test(path)) return;
    if (owned && REFERENCE_PATH.test(path) && (req.method === 'GET' || req.method === 'HEAD')) {
      return reply
        .header('Cache-Control', 'no-store')
        .header('Referrer-Policy', 'no-referrer')
        .redirect(`/p/${reference}${q < 0 ? '' : req.url.slice(q)}`, 302);
    }
    // A path no route matches is on its way to the not-found handler already, which runs this hook first.
    if (req.is404) return;
    return reply.callNotFound();
  });
}
