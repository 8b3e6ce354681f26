import type { Queryable } from '../shared/db.ts';

/**
 * The organisation's light logo on the hosted pay page (docs/api-conventions.md, "Branding"). The invoice page links it
 * as `/p/{reference}/logo/{sha256}`: under the link's own path (the reference is the capability, as for the page
 * itself), named by the image's hash, so it is served from the pay service's origin and the page's
 * Content-Security-Policy stays `img-src 'self'`. Only the organisation's current light logo is served; an older hash
 * is 404.
 */
export async function findPayPageLogo(sql: Queryable, reference: string, sha256: string): Promise<{ mime: string; content: Buffer } | undefined> {
  if (!/^[0-9a-f]{32}$/.test(reference) || !/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  const [row] = await sql<{ mime: string; content: Buffer }[]>`
    SELECT i.mime, i.content
    FROM payment_links p
    JOIN branding_logos l ON l.organization_id = p.organization_id AND l.variant = 'light' AND l.sha256 = ${sha256}
    JOIN branding_images i ON i.organization_id = l.organization_id AND i.sha256 = l.sha256
    WHERE p.reference = ${reference}`;
  return row;
}
