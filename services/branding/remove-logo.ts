import type { LogoVariant } from '../../contracts/branding.ts';
import type { Tx } from '../shared/db.ts';

/**
 * Takes the variant's logo away (DELETE /v1/branding/logo); nothing to take away is the same outcome. The image
 * itself stays: documents already rendered with it name it, and it is write-once.
 */
export async function removeLogo(tx: Tx, organizationId: string, variant: LogoVariant): Promise<void> {
  await tx`DELETE FROM branding_logos WHERE organization_id = ${organizationId} AND variant = ${variant}`;
}
