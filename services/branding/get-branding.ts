import type { Branding, BrandingLogo, LogoVariant } from '../../contracts/branding.ts';
import type { Queryable } from '../shared/db.ts';

/** The organisation's current logo per variant (GET /v1/branding, and the answer of an upload). */
export async function getBranding(sql: Queryable, organizationId: string): Promise<Branding> {
  const rows = await sql<({ variant: LogoVariant } & Omit<BrandingLogo, 'updatedAt'> & { updatedAt: Date })[]>`
    SELECT l.variant, i.mime, octet_length(i.content) AS bytes, i.sha256, i.width, i.height, l.updated_at AS "updatedAt"
    FROM branding_logos l
    JOIN branding_images i ON i.organization_id = l.organization_id AND i.sha256 = l.sha256
    WHERE l.organization_id = ${organizationId}`;
  const status: Branding = { light: null, dark: null };
  for (const { variant, updatedAt, ...logo } of rows) status[variant] = { ...logo, updatedAt: updatedAt.toISOString() };
  return status;
}
