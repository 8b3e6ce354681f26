import type { Config } from '../shared/config.ts';
import { createDnsChecks, type DnsChecks } from './dns-checks.ts';
import { serviceHosts, type ServiceHosts } from './domain-use.ts';

/** What the payment-domain and customer-portal routes need of the configuration (docs/operations.md, "Configuration"). */
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

/** PORTAL_CNAME_TARGET's default (services/shared/config.ts), for an API built without domain settings. */
const DEFAULT_CNAME_TARGET = 'portal.faktura.invalid';

/** The hosts no payment domain or portal custom domain may be (domain-use.ts), from the API's configuration. */
export function serviceHostsOf(deps: { payBaseUrl?: string | undefined; publicApiUrl?: string | undefined; domains?: DomainSettings | undefined }): ServiceHosts {
  return serviceHosts({
    payBaseUrl: deps.payBaseUrl,
    publicApiUrl: deps.publicApiUrl,
    portalBaseDomain: deps.domains?.portalBaseDomain,
    portalCnameTarget: deps.domains?.portalCnameTarget ?? DEFAULT_CNAME_TARGET,
  });
}
