import type { Branding, LogoVariant } from '../../contracts/branding.ts';
import type { Tx } from '../shared/db.ts';
import type { CheckedLogo } from './check-logo.ts';
import { getBranding } from './get-branding.ts';

/**
 * Makes a checked logo the variant's current one. The image is stored once per organisation by its SHA-256 and never
 * changed or removed (documents rendered with it keep pointing at it); the variant's pointer moves. Uploading the image
 * the variant already shows changes nothing, `updatedAt` included.
 */
export async function saveLogo(tx: Tx, organizationId: string, variant: LogoVariant, logo: CheckedLogo): Promise<Branding> {
  await tx`
    INSERT INTO branding_images (organization_id, sha256, mime, content, width, height)
    VALUES (${organizationId}, ${logo.sha256}, ${logo.mime}, ${logo.content}, ${logo.width}, ${logo.height})
    ON CONFLICT (organization_id, sha256) DO NOTHING`;
  await tx`
    INSERT INTO branding_logos (organization_id, variant, sha256) VALUES (${organizationId}, ${variant}, ${logo.sha256})
    ON CONFLICT (organization_id, variant) DO UPDATE SET sha256 = EXCLUDED.sha256, updated_at = now()
    WHERE branding_logos.sha256 <> EXCLUDED.sha256`;
  return getBranding(tx, organizationId);
}
