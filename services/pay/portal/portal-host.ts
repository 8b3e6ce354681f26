import type { IncomingMessage } from 'node:http';

/**
 * The portal's two addresses (settings-and-batch.md): `<subdomain>.<PORTAL_BASE_DOMAIN>` in production and
 * `<pay base>/portal/<subdomain>` locally. Both reach the same routes: a request for a portal host has its path
 * moved under `/portal/<subdomain>` before routing (Fastify's rewriteUrl), and the pages build their links for the
 * form the request came in by.
 */

/** The subdomain a Host header names under the base domain; undefined for any other host (the pay page's own). */
export function portalSubdomainOfHost(host: string | undefined, baseDomain: string | undefined): string | undefined {
  if (!host || !baseDomain) return undefined;
  const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  const suffix = `.${baseDomain.toLowerCase()}`;
  if (!name.endsWith(suffix)) return undefined;
  const sub = name.slice(0, -suffix.length);
  return /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/.test(sub) ? sub : undefined;
}

/** Fastify's rewriteUrl: a portal host's request path, as the path form of the same page. */
export function portalRewriteUrl(baseDomain: string | undefined): (req: IncomingMessage) => string {
  return (req) => {
    const url = req.url ?? '/';
    const sub = portalSubdomainOfHost(req.headers.host, baseDomain);
    return sub === undefined ? url : `/portal/${sub}${url === '/' ? '' : url}`;
  };
}
