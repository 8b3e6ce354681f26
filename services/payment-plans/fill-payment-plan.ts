import type { Queryable } from '../shared/db.ts';
import { recordPlanChange } from './payment-plan-queries.ts';
import { PAYMENT_PLAN_LIFECYCLE, PAYMENT_PLAN_STATUS } from './payment-plan-lifecycle.ts';

/**
 * A payment on an invoice with an active payment plan fills its instalments (docs/reminders.md, "Payment plans"): in
 * the payment's transaction, with the invoice's row locked, the amount is added to what the plan has received (the
 * instalments fill in order from that sum: payment-plan-policy.ts). The payment that pays every instalment, or that
 * settles the invoice, completes the plan on `on` (the business today) at `at` (the payment's registration), with
 * `payment_plan.completed` and its timeline entry. A payment is booked once (its booking key), so it is counted once.
 */
export async function fillPaymentPlan(sql: Queryable, organizationId: string, planId: string, amountOere: number, settles: boolean, on: string, at: Date): Promise<void> {
  const [plan] = await sql<{ id: string; invoice_id: string; customer_id: string; paid_oere: number; total_oere: number }[]>`
    UPDATE payment_plans SET paid_oere = paid_oere + ${amountOere}, updated_at = now()
    WHERE organization_id = ${organizationId} AND id = ${planId} AND status IN ${PAYMENT_PLAN_LIFECYCLE.in(sql, [PAYMENT_PLAN_STATUS.active])}
    RETURNING id, invoice_id, customer_id, paid_oere::float8 AS paid_oere, total_oere::float8 AS total_oere`;
  if (!plan || (!settles && plan.paid_oere < plan.total_oere)) return;
  await PAYMENT_PLAN_LIFECYCLE.transition(sql, plan.id, 'complete', { organizationId, set: sql`ended_on = ${on}::date, ended_at = ${at}` });
  await recordPlanChange(sql, organizationId, { id: plan.id, invoiceId: plan.invoice_id, customerId: plan.customer_id }, 'payment_plan.completed', at);
}
