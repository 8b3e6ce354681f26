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

/**
 * The active portal at a subdomain (settings in customer_portals, migration 024; the logo in branding_logos,
 * migration 023). An inactive portal, an unknown subdomain and a name that cannot be one all read as none: the
 * pages answer each with the same 404.
 */
export async function findActivePortal(sql: Queryable, subdomain: string): Promise<Portal | undefined> {
  const name = subdomain.toLowerCase();
  if (!SUBDOMAIN.test(name)) return undefined;
  const [row] = await sql<{
    organization_id: string; name: string; subdomain: string; subscription_self_service: boolean;
    primary_color: string | null; palette: string; logo: string | null;
  }[]>`
    SELECT p.organization_id, o.name, p.subdomain, p.subscription_self_service, p.primary_color, p.palette, l.sha256 AS logo
    FROM customer_portals p
    JOIN organizations o ON o.id = p.organization_id
    LEFT JOIN branding_logos l ON l.organization_id = p.organization_id AND l.variant = 'light'
    WHERE p.subdomain = ${name} AND p.active`;
  if (!row) return undefined;
  return {
    organizationId: row.organization_id,
    organizationName: row.name,
    subdomain: row.subdomain,
    subscriptionSelfService: row.subscription_self_service,
    primaryColor: row.primary_color,
    palette: row.palette,
    logoSha256: row.logo,
  };
}

/** The image of a portal's logo by its hash (write-once, so a hash names one image for good). */
export async function findPortalLogo(sql: Queryable, organizationId: string, sha256Hex: string): Promise<{ mime: string; content: Buffer } | undefined> {
  if (!/^[0-9a-f]{64}$/.test(sha256Hex)) return undefined;
  const [row] = await sql<{ mime: string; content: Buffer }[]>`
    SELECT mime, content FROM branding_images WHERE organization_id = ${organizationId} AND sha256 = ${sha256Hex}`;
  return row;
}
