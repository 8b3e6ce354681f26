import { SCOPES, type Scope } from '../../contracts/scopes.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { createApiKey, type NewApiKey } from './create-api-key.ts';
import { sellerColumns, type SellerDetails } from './organization-fields.ts';
import { DEFAULT_PLAN, type Plan } from './plans.ts';

export interface CreateOrganizationInput extends SellerDetails {
  name: string;
  cvr?: string;
  sandbox: boolean;
  /** The first key's scopes; every scope when absent. */
  scopes?: readonly Scope[];
  /** `standard` when absent. */
  plan?: Plan;
}

/** Creates an organisation and its first key, which holds every scope unless told otherwise. */
export async function createOrganization(sql: Queryable, input: CreateOrganizationInput): Promise<{ organizationId: string } & NewApiKey> {
  const organizationId = uuidv7();
  const row = { id: organizationId, name: input.name, cvr: input.cvr ?? null, sandbox: input.sandbox, plan: input.plan ?? DEFAULT_PLAN, ...sellerColumns(input) };
  await sql`INSERT INTO organizations ${sql(row as Record<string, unknown>)}`;
  const key = await createApiKey(sql, organizationId, input.sandbox, input.scopes ?? SCOPES);
  return { organizationId, ...key };
}
