import type { PaymentPlan } from '../../contracts/payment-plans.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { latestPaymentPlan, toPaymentPlan } from './payment-plan-queries.ts';

/**
 * GET /v1/invoices/{id}/payment-plan: the invoice's latest plan, its instalments filled and dated against the
 * organisation's business today. 404 invoice_not_found for an invoice the organisation does not have, 404
 * payment_plan_not_found for one that never had a plan.
 */
export async function getPaymentPlan(sql: Queryable, organizationId: string, invoiceId: string): Promise<PaymentPlan> {
  if (!isUuid(invoiceId)) throw notFound('invoice_not_found', 'invoice');
  const [invoice] = await sql<{ today: string }[]>`
    SELECT business_today(organization_id)::text AS today FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  if (!invoice) throw notFound('invoice_not_found', 'invoice');
  const plan = await latestPaymentPlan(sql, organizationId, invoiceId);
  if (!plan) throw notFound('payment_plan_not_found', 'payment plan for that invoice');
  return toPaymentPlan(plan, invoice.today);
}
