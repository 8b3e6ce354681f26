import type { PaymentPlan } from '../../contracts/payment-plans.ts';
import { WORK } from '../../contracts/workflows.ts';
import type { EngineClient } from '../shared/engine-client.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { loadDunningContext } from '../reminders/dunning-context.ts';
import { lockCustomerDunning } from '../reminders/lock-customer-dunning.ts';
import { scheduleDunning } from '../reminders/schedule-dunning.ts';
import { latestPaymentPlan, recordPlanChange, toPaymentPlan } from './payment-plan-queries.ts';
import { PAYMENT_PLAN_LIFECYCLE } from './payment-plan-lifecycle.ts';

/**
 * POST /v1/invoices/{id}/payment-plan/cancel: the invoice's latest plan → `cancelled` (422 invalid_transition unless
 * it is `active`), ended on the business today, with `payment_plan.cancelled` and its timeline entry. Under the
 * customer's dunning lock and the invoice's row lock, as a dunning step. Dunning resumes: the invoice's lifecycle is
 * listed due now, and takes its next step from today on (every statutory rule holds, none dated before today).
 */
export async function cancelPaymentPlan(sql: Queryable, organizationId: string, invoiceId: string): Promise<PaymentPlan> {
  if (!isUuid(invoiceId)) throw notFound('invoice_not_found', 'invoice');
  await lockCustomerDunning(sql, organizationId, invoiceId);
  const ctx = await loadDunningContext(sql, organizationId, invoiceId);
  if (!ctx) throw notFound('invoice_not_found', 'invoice');
  const plan = ctx.paymentPlan;
  if (!plan) throw notFound('payment_plan_not_found', 'payment plan for that invoice');
  PAYMENT_PLAN_LIFECYCLE.assert(plan.status, 'cancel');
  await endPaymentPlan(sql, organizationId, plan, 'cancel', ctx.today, ctx.now);
  await scheduleDunning(sql, organizationId, plan.invoice_id, ctx.today);
  return toPaymentPlan((await latestPaymentPlan(sql, organizationId, plan.invoice_id))!, ctx.today);
}

/**
 * Ends an active plan (`cancel` refuses with 422 invalid_transition when it is not active; `tryCancel` answers
 * false), on `on` at `at`, with its event and timeline entry.
 */
export async function endPaymentPlan(
  sql: Queryable,
  organizationId: string,
  plan: { id: string; invoice_id: string; customer_id: string },
  how: 'cancel' | 'tryCancel',
  on: string,
  at: Date,
): Promise<boolean> {
  const opts = { organizationId, readFrom: true, set: sql`ended_on = ${on}::date, ended_at = ${at}` };
  const moved = how === 'cancel' ? await PAYMENT_PLAN_LIFECYCLE.transition(sql, plan.id, 'cancel', opts) : await PAYMENT_PLAN_LIFECYCLE.tryTransition(sql, plan.id, 'cancel', opts);
  if (!moved) return false;
  await recordPlanChange(sql, organizationId, { id: plan.id, invoiceId: plan.invoice_id, customerId: plan.customer_id }, 'payment_plan.cancelled', at);
  return true;
}

/** The route's use case: 200 with the cancelled plan; the invoice's Dunning object is poked after the commit. */
export function cancelPlanNow(deps: { engine?: Pick<EngineClient, 'poke'> | undefined }, organizationId: string, invoiceId: string): MutationUseCase {
  const engine = deps.engine;
  return async (tx) => {
    const plan = await cancelPaymentPlan(tx, organizationId, invoiceId);
    return { status: 200, data: plan, ...(engine ? { afterCommit: () => engine.poke(WORK.dunning(organizationId, plan.invoiceId)) } : {}) };
  };
}
