import type { PendingQuery, Row } from 'postgres';
import type { LogoMime } from '../../contracts/branding.ts';
import type { Queryable } from '../shared/db.ts';

/**
 * The logo a document is printed with: the organisation's light logo as it was when the document was issued
 * (docs/api-conventions.md, "Branding"). A document records the image's SHA-256 in the transaction that issues it
 * (an invoice's reservation, a credit note's insert, a reminder's insert, a payment's receipt request) and is rendered
 * from that image, whenever the rendering happens; images are write-once, so a later upload or deletion never
 * changes what a document shows.
 */
export interface DocumentLogo {
  mime: LogoMime;
  /** The image's bytes in base64, for a data: URL (the renderer loads nothing from the network). */
  base64: string;
}

/** The SHA-256 of the organisation's light logo now, or NULL: a subquery for the statement that issues a document. */
export const lightLogoNow = (sql: Queryable, organizationId: string): PendingQuery<Row[]> =>
  sql`(SELECT sha256 FROM branding_logos WHERE organization_id = ${organizationId} AND variant = 'light')`;

/** The image a document recorded; null when it recorded none. */
export async function loadDocumentLogo(sql: Queryable, organizationId: string, sha256: string | null): Promise<DocumentLogo | null> {
  if (sha256 === null) return null;
  const [row] = await sql<{ mime: LogoMime; content: Buffer }[]>`
    SELECT mime, content FROM branding_images WHERE organization_id = ${organizationId} AND sha256 = ${sha256}`;
  // The foreign key of every recording column makes a missing image impossible; should it happen, the document must not
  // go out without the logo it recorded.
  if (!row) throw new Error(`logo image ${sha256} recorded by a document of ${organizationId} is missing`);
  return { mime: row.mime, base64: row.content.toString('base64') };
}

/** The light logo now with its hash, for a document rendered inside the transaction that issues it (a credit note). */
export async function currentDocumentLogo(sql: Queryable, organizationId: string): Promise<{ sha256: string; logo: DocumentLogo } | null> {
  const [row] = await sql<{ sha256: string; mime: LogoMime; content: Buffer }[]>`
    SELECT i.sha256, i.mime, i.content
    FROM branding_logos l JOIN branding_images i ON i.organization_id = l.organization_id AND i.sha256 = l.sha256
    WHERE l.organization_id = ${organizationId} AND l.variant = 'light'`;
  return row ? { sha256: row.sha256, logo: { mime: row.mime, base64: row.content.toString('base64') } } : null;
}

/** The logo as the templates embed it. */
export const logoDataUrl = (logo: DocumentLogo): string => `data:${logo.mime};base64,${logo.base64}`;
