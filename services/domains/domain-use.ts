import type { Queryable, Tx } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { internalZoneOf } from './host-name.ts';

/**
 * Which host names an organisation may take as its payment domain or its portal's custom domain, beyond being host
 * names (host-name.ts). The pay service tells a request's purpose by its Host alone: the pay service's and the API's
 * own hosts, the portal's hosts under PORTAL_BASE_DOMAIN (and PORTAL_CNAME_TARGET) and every payment domain and portal
 * custom domain must therefore be different names, or one organisation's domain would shadow a service page or
 * another organisation's. Judged when a domain is set (PUT /v1/payment-domain, PATCH /v1/customer-portal) and again
 * when it is verified, since two organisations may set one name for the two uses at the same moment, and the
 * configuration may have changed since the name was set.
 */
export interface ServiceHosts {
  /** The hosts the services answer on themselves: PAY_BASE_URL's, PUBLIC_API_URL's and PORTAL_CNAME_TARGET. */
  own: ReadonlySet<string>;
  /** PORTAL_BASE_DOMAIN, in lower case: it and every name under it are the portal's. */
  portalBaseDomain: string | undefined;
}

export type DomainUse = 'payment' | 'portal';

/** Why a name cannot be used: `code` for the set-time refusal, `reason` (one sentence) for both it and a failed check. */
export interface DomainRefusal {
  code: 'invalid_domain' | 'domain_in_use';
  reason: string;
  /** The `details` message at the field's pointer. */
  detail: string;
}

const canonical = (name: string) => name.toLowerCase().replace(/\.$/, '');

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return canonical(new URL(url).hostname);
  } catch {
    return undefined;
  }
}

export function serviceHosts(input: {
  payBaseUrl: string | undefined;
  publicApiUrl: string | undefined;
  portalBaseDomain: string | undefined;
  portalCnameTarget: string | undefined;
}): ServiceHosts {
  const own = new Set<string>();
  for (const host of [hostOf(input.payBaseUrl), hostOf(input.publicApiUrl), input.portalCnameTarget && canonical(input.portalCnameTarget)]) {
    if (host) own.add(host);
  }
  return { own, portalBaseDomain: input.portalBaseDomain ? canonical(input.portalBaseDomain) : undefined };
}

/** Refusals that the name alone and the configuration decide (no database): internal zones and the services' hosts. */
export function refusedByConfiguration(name: string, hosts: ServiceHosts): DomainRefusal | undefined {
  const zone = internalZoneOf(name);
  if (zone) {
    return {
      code: 'invalid_domain',
      reason: `${name} is in the internal-only zone .${zone}, which is not reachable from the internet.`,
      detail: 'must not be in an internal-only zone',
    };
  }
  if (hosts.own.has(name)) {
    return { code: 'invalid_domain', reason: `${name} is an address of the service itself.`, detail: 'is an address of the service itself' };
  }
  const base = hosts.portalBaseDomain;
  if (base && (name === base || name.endsWith(`.${base}`))) {
    return {
      code: 'invalid_domain',
      reason: `${name} is under the customer portal's own domain ${base}.`,
      detail: "must not be under the customer portal's own domain",
    };
  }
  return undefined;
}

/** The name is the other use's of any organisation (this one's too), whatever that one's status. */
async function refusedByOtherUse(sql: Queryable, name: string, use: DomainUse): Promise<DomainRefusal | undefined> {
  const [held] = use === 'payment'
    ? await sql`SELECT 1 FROM customer_portals WHERE custom_domain = ${name} LIMIT 1`
    : await sql`SELECT 1 FROM payment_domains WHERE domain = ${name} LIMIT 1`;
  if (!held) return undefined;
  return use === 'payment'
    ? {
      code: 'domain_in_use',
      reason: `${name} is in use as a customer portal's custom domain; a payment domain needs a name of its own.`,
      detail: "is in use as a customer portal's custom domain",
    }
    : {
      code: 'domain_in_use',
      reason: `${name} is in use as a payment domain; a portal's custom domain needs a name of its own.`,
      detail: 'is in use as a payment domain',
    };
}

/**
 * Every refusal of `name` for `use`, in the caller's transaction. The transaction first takes an advisory lock on the
 * name, so two organisations setting one name for the two uses at once are judged one after the other (the second
 * sees the first's committed row); the check at verify time stays, for rows written before this rule existed.
 */
export async function domainRefusal(tx: Tx, name: string, use: DomainUse, hosts: ServiceHosts): Promise<DomainRefusal | undefined> {
  const byConfiguration = refusedByConfiguration(name, hosts);
  if (byConfiguration) return byConfiguration;
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`domain-use:${name}`}, 0))`;
  return refusedByOtherUse(tx, name, use);
}

/** The set-time answer: 422 invalid_domain or 409 domain_in_use, `details` at the field's pointer. */
export function refusalError(refusal: DomainRefusal, path: string): DomainError {
  return new DomainError(refusal.code, refusal.reason, { details: [{ path, message: refusal.detail }] });
}
