import type { IncomingMessage } from 'node:http';
import type { Db } from '../../shared/db.ts';

/**
 * The portal's addresses (settings-and-batch.md; docs/customer-portal.md): `<subdomain>.<PORTAL_BASE_DOMAIN>`, the
 * portal's verified custom domain, and `<pay base>/portal/<subdomain>`. All reach the same routes: a request for a
 * portal host has its path moved under `/portal/<subdomain>` before routing (Fastify's rewriteUrl), and the pages
 * build their links for the form the request came in by.
 *
 * Routing happens before any database read can, so verified custom domains are kept in memory, read at start and
 * every REFRESH_MS after: a domain verified (or changed) is served within that time.
 */
export const CUSTOM_DOMAIN_REFRESH_MS = 30_000;

const SUBDOMAIN = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;

export class PortalHosts {
  private readonly baseDomain: string | undefined;
  private customDomains = new Map<string, string>();

  constructor(baseDomain: string | undefined) {
    this.baseDomain = baseDomain?.toLowerCase();
  }

  /** The subdomain of the portal a Host header names; undefined for any other host (the pay page's own). */
  subdomainOf(host: string | undefined): string | undefined {
    if (!host) return undefined;
    const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    if (this.baseDomain && name.endsWith(`.${this.baseDomain}`)) {
      const sub = name.slice(0, -(this.baseDomain.length + 1));
      if (SUBDOMAIN.test(sub)) return sub;
    }
    return this.customDomains.get(name);
  }

  /** Re-reads the verified custom domains (migration 024 keeps each verified one unique). */
  async refresh(db: Db): Promise<void> {
    const rows = await db.read((sql) => sql<{ custom_domain: string; subdomain: string }[]>`
      SELECT custom_domain, subdomain FROM customer_portals
      WHERE custom_domain_status = 'verified' AND subdomain IS NOT NULL`);
    this.customDomains = new Map(rows.map((r) => [r.custom_domain, r.subdomain]));
  }
}

/** Fastify's rewriteUrl: a portal host's request path, as the path form of the same page. */
export function portalRewriteUrl(hosts: PortalHosts): (req: IncomingMessage) => string {
  return (req) => {
    const url = req.url ?? '/';
    const sub = hosts.subdomainOf(req.headers.host);
    return sub === undefined ? url : `/portal/${sub}${url === '/' ? '' : url}`;
  };
}
