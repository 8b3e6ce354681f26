import { CUSTOM_DOMAIN_LIFECYCLE } from '../../customer-portal/custom-domain-lifecycle.ts';
import { PAYMENT_DOMAIN_LIFECYCLE, VERIFIED_DOMAIN } from '../../domains/payment-domain-lifecycle.ts';
import type { Queryable } from '../../shared/db.ts';

/** An active portal as its pages need it: whose it is, and how it looks. */
export interface Portal {
  organizationId: string;
  organizationName: string;
  subdomain: string;
  subscriptionSelfService: boolean;
  primaryColor: string | null;
  palette: string;
  /** SHA-256 (hex) of the organisation's current light logo, when it has one. */
  logoSha256: string | null;
}

const SUBDOMAIN = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;

type PortalRow = {
  organization_id: string; name: string; subdomain: string; subscription_self_service: boolean;
  primary_color: string | null; palette: string; logo: string | null;
};

const portalOf = (row: PortalRow): Portal => ({
  organizationId: row.organization_id,
  organizationName: row.name,
  subdomain: row.subdomain,
  subscriptionSelfService: row.subscription_self_service,
  primaryColor: row.primary_color,
  palette: row.palette,
  logoSha256: row.logo,
});

/**
 * The active portal at a subdomain (settings in customer_portals, migration 024; the logo in branding_logos,
 * migration 023). An inactive portal, an unknown subdomain and a name that cannot be one all read as none: the
 * pages answer each with the same 404.
 */
export async function findActivePortal(sql: Queryable, subdomain: string): Promise<Portal | undefined> {
  const name = subdomain.toLowerCase();
  if (!SUBDOMAIN.test(name)) return undefined;
  const [row] = await sql<PortalRow[]>`
    SELECT p.organization_id, o.name, p.subdomain, p.subscription_self_service, p.primary_color, p.palette, l.sha256 AS logo
    FROM customer_portals p
    JOIN organizations o ON o.id = p.organization_id
    LEFT JOIN branding_logos l ON l.organization_id = p.organization_id AND l.variant = 'light'
    WHERE p.subdomain = ${name} AND p.active`;
  return row && portalOf(row);
}

/**
 * The active portal a host names now: `<subdomain>.<PORTAL_BASE_DOMAIN>` (the caller passes the subdomain) or the
 * portal's verified custom domain. A verified payment domain is never a portal's host, even if it were also entered
 * as some portal's custom domain: its requests are the pay page's. Should a host be both one portal's subdomain host
 * and another's custom domain, the subdomain wins (the settings API refuses custom domains under the base domain).
 */
export async function findActivePortalByHost(sql: Queryable, hostname: string, subdomain: string | undefined): Promise<Portal | undefined> {
  const [row] = await sql<PortalRow[]>`
    SELECT p.organization_id, o.name, p.subdomain, p.subscription_self_service, p.primary_color, p.palette, l.sha256 AS logo
    FROM customer_portals p
    JOIN organizations o ON o.id = p.organization_id
    LEFT JOIN branding_logos l ON l.organization_id = p.organization_id AND l.variant = 'light'
    WHERE p.active
      AND (p.subdomain = ${subdomain ?? null} OR (p.custom_domain = ${hostname} AND p.custom_domain_status IN ${CUSTOM_DOMAIN_LIFECYCLE.in(sql, [VERIFIED_DOMAIN])}))
      AND NOT EXISTS (SELECT 1 FROM payment_domains d WHERE d.domain = ${hostname} AND d.status IN ${PAYMENT_DOMAIN_LIFECYCLE.in(sql, [VERIFIED_DOMAIN])})
    ORDER BY p.subdomain IS NOT DISTINCT FROM ${subdomain ?? null} DESC
    LIMIT 1`;
  return row && portalOf(row);
}

/**
 * The image of a portal's logo by its hash, only while it is the organisation's current light logo: an image it
 * replaced, deleted or uploaded as its dark logo is not served (as by the pay page's logo route, routes/logo.ts).
 */
export async function findPortalLogo(sql: Queryable, organizationId: string, sha256Hex: string): Promise<{ mime: string; content: Buffer } | undefined> {
  if (!/^[0-9a-f]{64}$/.test(sha256Hex)) return undefined;
  const [row] = await sql<{ mime: string; content: Buffer }[]>`
    SELECT i.mime, i.content
    FROM branding_logos l
    JOIN branding_images i ON i.organization_id = l.organization_id AND i.sha256 = l.sha256
    WHERE l.organization_id = ${organizationId} AND l.variant = 'light' AND l.sha256 = ${sha256Hex}`;
  return row;
}
