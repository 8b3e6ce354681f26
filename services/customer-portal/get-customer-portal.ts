import type { CustomerPortal } from '../../contracts/customer-portal.ts';
import type { Queryable } from '../shared/db.ts';
import { findPortalRow, toCustomerPortal, type PortalAddresses } from './portal-row.ts';

/** GET /v1/customer-portal: the portal's settings, the defaults until the first PATCH. */
export async function getCustomerPortal(sql: Queryable, organizationId: string, at: PortalAddresses): Promise<CustomerPortal> {
  return toCustomerPortal(await findPortalRow(sql, organizationId), at);
}
