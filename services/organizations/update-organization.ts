import type { Queryable } from '../shared/db.ts';
import { sellerColumns, type SellerDetails } from './organization-fields.ts';

export interface UpdateOrganizationInput extends SellerDetails {
  name?: string;
  cvr?: string;
  /** The customer balance's `pastDue` thresholds: overdue amount (øre) and days overdue, both to be reached. */
  pastDueMinOere?: number;
  pastDueMinDays?: number;
}

export async function updateOrganization(sql: Queryable, organizationId: string, input: UpdateOrganizationInput): Promise<boolean> {
  const set: Record<string, unknown> = { ...sellerColumns(input), updated_at: new Date() };
  if (input.name !== undefined) set.name = input.name;
  if (input.cvr !== undefined) set.cvr = input.cvr;
  if (input.pastDueMinOere !== undefined) set.past_due_amount_oere = input.pastDueMinOere;
  if (input.pastDueMinDays !== undefined) set.past_due_days = input.pastDueMinDays;
  const rows = await sql`UPDATE organizations SET ${sql(set)} WHERE id = ${organizationId} RETURNING id`;
  return rows.length === 1;
}
