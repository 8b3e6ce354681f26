import type { Queryable } from '../shared/db.ts';
import type { PaymentPlanRow } from './payment-plan-queries.ts';
import { recordPlanChange } from './payment-plan-queries.ts';
import { PAYMENT_PLAN_LIFECYCLE } from './payment-plan-lifecycle.ts';

/**
 * The dunning step that breaks an active payment plan on `on` (its first unpaid instalment's due date + 10 days:
 * payment-plan-policy.ts's `breaksOn`), in the step's transaction with the customer's dunning lock and the invoice's
 * row held: the plan becomes `broken`, ended on that date (dunning resumes from it), with `payment_plan.broken` and
 * its timeline entry written at `at` (the step's instant). A plan no longer active (a payment completed it, a cancel
 * came first) is left alone: false.
 */
export async function breakPaymentPlan(sql: Queryable, organizationId: string, plan: PaymentPlanRow, on: string, at: Date): Promise<boolean> {
  const moved = await PAYMENT_PLAN_LIFECYCLE.tryTransition(sql, plan.id, 'break', {
    organizationId,
    set: sql`ended_on = ${on}::date, ended_at = ${at}`,
  });
  if (!moved) return false;
  await recordPlanChange(sql, organizationId, { id: plan.id, invoiceId: plan.invoice_id, customerId: plan.customer_id }, 'payment_plan.broken', at);
  return true;
}
