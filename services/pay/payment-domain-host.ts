import type { FastifyInstance } from 'fastify';
import type { Db } from '../shared/db.ts';

/** A path that can be a payment link on a payment domain: `/<reference>` (32 lowercase hex characters). */
const REFERENCE_PATH = /^\/([0-9a-f]{32})\/?(\?.*)?$/;

/**
 * Payment links on an organisation's verified payment domain are `https://<domain>/<reference>`
 * (services/payments/payment-links.ts); the domain points at this service. A GET of `/<reference>` whose Host is a
 * verified payment domain and whose link belongs to that domain's organisation is sent on to the invoice's pay page,
 * `/p/<reference>` on the same host (query kept), so the customer stays on the creditor's domain. Every other request
 * goes on as before: an unverified domain, another organisation's link or an unknown reference get the usual not-found
 * page, exactly as a reference that does not exist.
 */
export function servePaymentDomainLinks(app: FastifyInstance, db: Db): void {
  app.addHook('onRequest', async (req, reply) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return;
    const match = REFERENCE_PATH.exec(req.url);
    if (!match) return;
    const [, reference, query = ''] = match;
    // The Host without its port (X-Forwarded-Host behind a trusted proxy), as the domain is stored: lower case, no final dot.
    const host = req.hostname.toLowerCase().replace(/\.$/, '');
    const [link] = await db.read((sql) => sql<{ reference: string }[]>`
      SELECT l.reference FROM payment_links l
      JOIN payment_domains d ON d.organization_id = l.organization_id AND d.status = 'verified'
      WHERE d.domain = ${host} AND l.reference = ${reference!}`);
    if (!link) return;
    return reply
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .redirect(`/p/${link.reference}${query}`, 302);
  });
}
