import type { PaymentDomain } from '../../contracts/payment-domain.ts';
import type { Queryable } from '../shared/db.ts';
import { findPaymentDomainRow, toPaymentDomain } from './payment-domain-row.ts';

/** GET /v1/payment-domain: the organisation's domain and where its verification stands (`none` without one). */
export async function getPaymentDomain(sql: Queryable, organizationId: string): Promise<PaymentDomain> {
  return toPaymentDomain(await findPaymentDomainRow(sql, organizationId));
}
