import type { Queryable } from '../shared/db.ts';
import { sellerColumns, type SellerDetails } from './organization-fields.ts';

export interface UpdateOrganizationInput extends SellerDetails {
  name?: string;
  cvr?: string;
}

export async function updateOrganization(sql: Queryable, organizationId: string, input: UpdateOrganizationInput): Promise<boolean> {
  const set: Record<string, unknown> = { ...sellerColumns(input), updated_at: new Date() };
  if (input.name !== undefined) set.name = input.name;
  if (input.cvr !== undefined) set.cvr = input.cvr;
  const rows = await sql`UPDATE organizations SET ${sql(set)} WHERE id = ${organizationId} RETURNING id`;
  return rows.length === 1;
}
