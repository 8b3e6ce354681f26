import type { CustomerPortal, PaletteName } from '../../contracts/customer-portal.ts';
import type { DomainStatus } from '../../contracts/payment-domain.ts';
import { NO_DOMAIN, VERIFIED_DOMAIN, type DomainTransition } from '../domains/payment-domain-lifecycle.ts';
import type { Queryable } from '../shared/db.ts';
import type { SqlFragment } from '../shared/lifecycle.ts';
import { CUSTOM_DOMAIN_LIFECYCLE } from './custom-domain-lifecycle.ts';

/** The organisation's row of customer_portals (migration 024); none means the defaults. */
export interface PortalRow {
  subdomain: string | null;
  active: boolean;
  subscription_self_service: boolean;
  primary_color: string | null;
  palette: PaletteName;
  custom_domain: string | null;
  custom_domain_status: DomainStatus;
  custom_domain_checked_at: Date | null;
  custom_domain_failure: string | null;
}

export const PORTAL_DEFAULTS: PortalRow = {
  subdomain: null,
  active: false,
  subscription_self_service: false,
  primary_color: null,
  palette: 'lys',
  custom_domain: null,
  custom_domain_status: NO_DOMAIN,
  custom_domain_checked_at: null,
  custom_domain_failure: null,
};

const ROW_COLUMNS = 'subdomain, active, subscription_self_service, primary_color, palette, custom_domain, custom_domain_checked_at, custom_domain_failure';

/**
 * Moves the portal's custom domain along `transition` (the kit's guarded UPDATE, custom-domain-lifecycle.ts), writing
 * `set` with it, and answers the row as it is now. The caller holds the row's lock.
 */
export async function transitionCustomDomain(sql: Queryable, organizationId: string, transition: DomainTransition, set: SqlFragment): Promise<PortalRow> {
  const moved = await CUSTOM_DOMAIN_LIFECYCLE.transition(sql, organizationId, transition, { set, returning: ROW_COLUMNS });
  return { ...(moved.row as Omit<PortalRow, 'custom_domain_status'>), custom_domain_status: moved.to };
}

/** Where the portal's address comes from: the pay service's public base, and PORTAL_BASE_DOMAIN when set. */
export interface PortalAddresses {
  payBaseUrl: string;
  portalBaseDomain: string | undefined;
}

export async function findPortalRow(sql: Queryable, organizationId: string, opts: { forUpdate?: boolean } = {}): Promise<PortalRow | undefined> {
  const [row] = opts.forUpdate
    ? await sql<PortalRow[]>`
        SELECT subdomain, active, subscription_self_service, primary_color, palette, custom_domain, custom_domain_status,
               custom_domain_checked_at, custom_domain_failure
        FROM customer_portals WHERE organization_id = ${organizationId} FOR UPDATE`
    : await sql<PortalRow[]>`
        SELECT subdomain, active, subscription_self_service, primary_color, palette, custom_domain, custom_domain_status,
               custom_domain_checked_at, custom_domain_failure
        FROM customer_portals WHERE organization_id = ${organizationId}`;
  return row;
}

/**
 * The portal's address: its verified custom domain, else its subdomain under PORTAL_BASE_DOMAIN, else (no base
 * domain configured, as locally) the pay service's `/portal/<subdomain>`. Shown whether or not the portal is active,
 * so an integrator can link to it before switching it on; null without a subdomain or verified custom domain.
 */
export function portalUrl(row: PortalRow, at: PortalAddresses): string | null {
  if (row.custom_domain && row.custom_domain_status === VERIFIED_DOMAIN) return `https://${row.custom_domain}`;
  if (!row.subdomain) return null;
  if (at.portalBaseDomain) return `https://${row.subdomain}.${at.portalBaseDomain}`;
  return `${at.payBaseUrl.replace(/\/+$/, '')}/portal/${row.subdomain}`;
}

export function toCustomerPortal(row: PortalRow | undefined, at: PortalAddresses): CustomerPortal {
  const r = row ?? PORTAL_DEFAULTS;
  return {
    subdomain: r.subdomain,
    active: r.active,
    subscriptionSelfService: r.subscription_self_service,
    primaryColor: r.primary_color,
    palette: r.palette,
    customDomain: r.custom_domain,
    customDomainStatus: r.custom_domain_status,
    customDomainCheckedAt: r.custom_domain_checked_at?.toISOString() ?? null,
    customDomainFailureReason: r.custom_domain_failure,
    url: portalUrl(r, at),
  };
}
