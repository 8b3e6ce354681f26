import type { Queryable } from '../shared/db.ts';
import { API_KEYS_CHANNEL } from './api-key-queries.ts';
import { sellerColumns, type SellerDetails } from './organization-fields.ts';
import type { Plan } from './plans.ts';

export interface UpdateOrganizationInput extends SellerDetails {
  name?: string;
  cvr?: string;
  /** The customer balance's `pastDue` thresholds: overdue amount (øre) and days overdue, both to be reached. */
  pastDueMinOere?: number;
  pastDueMinDays?: number;
  plan?: Plan;
}

export async function updateOrganization(sql: Queryable, organizationId: string, input: UpdateOrganizationInput): Promise<boolean> {
  const set: Record<string, unknown> = { ...sellerColumns(input), updated_at: new Date() };
  if (input.name !== undefined) set.name = input.name;
  if (input.cvr !== undefined) set.cvr = input.cvr;
  if (input.pastDueMinOere !== undefined) set.past_due_amount_oere = input.pastDueMinOere;
  if (input.pastDueMinDays !== undefined) set.past_due_days = input.pastDueMinDays;
  if (input.plan !== undefined) set.plan = input.plan;
  const rows = await sql`UPDATE organizations SET ${sql(set)} WHERE id = ${organizationId} RETURNING id`;
  // The plan travels with every cached key (auth.ts): on commit, every API process drops its cached keys, so a plan
  // change counts from the next request, not after the cache TTL.
  if (rows.length === 1 && input.plan !== undefined) await sql`SELECT pg_notify(${API_KEYS_CHANNEL}, '')`;
  return rows.length === 1;
}
