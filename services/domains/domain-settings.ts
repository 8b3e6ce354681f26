import type { Config } from '../shared/config.ts';
import { createDnsChecks, type DnsChecks } from './dns-checks.ts';

/** What the payment-domain and customer-portal routes need of the configuration (README, "Configuration"). */
export interface DomainSettings {
  /** The live DNS checks, on DNS_SERVERS or the system's resolvers. */
  checks: DnsChecks;
  /** PORTAL_CNAME_TARGET: what a portal custom domain must be a CNAME to. */
  portalCnameTarget: string;
  /** PORTAL_BASE_DOMAIN: the portal lives at `<subdomain>.<PORTAL_BASE_DOMAIN>`; unset, at `<pay base URL>/portal/<subdomain>`. */
  portalBaseDomain: string | undefined;
}

export function domainSettings(config: Pick<Config, 'dnsServers' | 'portalCnameTarget' | 'portalBaseDomain'>): DomainSettings {
  return {
    checks: createDnsChecks({ servers: config.dnsServers }),
    portalCnameTarget: config.portalCnameTarget,
    portalBaseDomain: config.portalBaseDomain,
  };
}
