import type { ServiceHosts } from '../domains/domain-use.ts';

/**
 * Subdomains no organisation's portal can take (PATCH /v1/customer-portal → 422 subdomain_reserved): a portal at
 * `<subdomain>.<PORTAL_BASE_DOMAIN>` would otherwise answer for a name the service uses or that people trust as the
 * service's own (a sign-in page at `login.` or `billing.`). The fixed names hold whether or not PORTAL_BASE_DOMAIN is
 * set, so a portal keeps its subdomain when the base domain is configured later.
 */
export const RESERVED_SUBDOMAINS: ReadonlySet<string> = new Set([
  'www', 'api', 'pay', 'app', 'admin', 'mail', 'smtp', 'imap', 'pop', 'ftp', 'ns1', 'ns2', 'portal', 'static', 'assets',
  'cdn', 'status', 'help', 'support', 'docs', 'auth', 'login', 'billing', 'faktura', 'autodiscover', 'autoconfig',
]);

/**
 * The labels the services' own hosts (pay, API, PORTAL_CNAME_TARGET) have directly under PORTAL_BASE_DOMAIN: with the
 * pay service at `betal.kunde.example` and the base domain `kunde.example`, the subdomain `betal` would be the pay
 * service's host.
 */
function serviceLabels(hosts: ServiceHosts): string[] {
  const base = hosts.portalBaseDomain;
  if (!base) return [];
  const labels: string[] = [];
  for (const host of hosts.own) {
    if (!host.endsWith(`.${base}`)) continue;
    const below = host.slice(0, -(base.length + 1));
    labels.push(below.slice(below.lastIndexOf('.') + 1));
  }
  return labels;
}

export function isReservedSubdomain(subdomain: string, hosts: ServiceHosts): boolean {
  return RESERVED_SUBDOMAINS.has(subdomain) || serviceLabels(hosts).includes(subdomain);
}
