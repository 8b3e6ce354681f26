import type { PaymentPlan, PaymentPlanCreate } from '../../contracts/payment-plans.ts';
import { WORK } from '../../contracts/workflows.ts';
import type { EngineClient } from '../shared/engine-client.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { isUuid, uuidv7 } from '../shared/ids.ts';
import { rowBalanceOere } from '../invoices/invoice-balance.ts';
import { INVOICE_STATUS, isIssued } from '../invoices/invoice-lifecycle.ts';
import { postInterest } from '../interest/post-interest.ts';
import { loadDunningContext } from '../reminders/dunning-context.ts';
import { lockCustomerDunning } from '../reminders/lock-customer-dunning.ts';
import { scheduleDunning } from '../reminders/schedule-dunning.ts';
import { installmentErrors, type Installment } from './payment-plan-policy.ts';
import { latestPaymentPlan, recordPlanChange, toPaymentPlan } from './payment-plan-queries.ts';
import { NEW_PAYMENT_PLAN_STATUS, PAYMENT_PLAN_STATUS } from './payment-plan-lifecycle.ts';

/**
 * POST /v1/invoices/{id}/payment-plan (docs/reminders.md, "Payment plans"): the plan, made in the caller's
 * transaction with the customer's dunning lock and the invoice's row held, as a dunning step takes them (so a plan
 * and a reminder of the customer never interleave). In order: 404 for an unknown invoice; 400 for a list the schema
 * could not judge (dates not strictly increasing, the first before the business today); 422 for an invoice that cannot
 * have one (a draft, in collections, nothing to pay); 409 while it has an active plan; then the interest accrued up
 * to and including today is posted (when the organisation charges it) and the amounts must add up exactly to the
 * balance (422 installments_total_mismatch with `expectedOere`; the posting rolls back with the refusal).
 *
 * Made: `payment_plan.created` and its timeline entry; the invoice's dunning is listed due now, so its Dunning object
 * re-plans at once: it takes no step while the plan is active, and waits for the day the plan would break.
 */
export async function createPaymentPlan(sql: Queryable, organizationId: string, invoiceId: string, input: PaymentPlanCreate): Promise<PaymentPlan> {
  if (!isUuid(invoiceId)) throw notFound('invoice_not_found', 'invoice');
  await lockCustomerDunning(sql, organizationId, invoiceId);
  const ctx = await loadDunningContext(sql, organizationId, invoiceId);
  if (!ctx) throw notFound('invoice_not_found', 'invoice');
  const errors = installmentErrors(input.installments, ctx.today);
  if (errors.length > 0) throw new DomainError('validation_failed', `${errors[0]!.path} ${errors[0]!.message}.`, { details: errors });
  const inv = ctx.invoice;
  if (!isIssued(inv.status)) throw new DomainError('invoice_not_issued', 'Only an issued invoice can have a payment plan.');
  if (inv.status === INVOICE_STATUS.collections) throw new DomainError('invoice_in_collections', 'The invoice has been handed over to debt collection.');
  if (inv.type !== 'invoice' || inv.status === INVOICE_STATUS.paid || rowBalanceOere(inv) <= 0) {
    throw new DomainError('invoice_already_paid', 'The invoice has nothing left to pay.');
  }
  if (ctx.paymentPlan?.status === PAYMENT_PLAN_STATUS.active) {
    throw new DomainError('payment_plan_exists', 'The invoice has an active payment plan; cancel it before making another.');
  }
  // The interest accrued up to and including today becomes a claim item first, so the plan pays exactly what is owed.
  let postedOere = 0;
  if (ctx.settings.lateInterest === 'statutory' && inv.due_date !== null && inv.due_date < ctx.today) {
    const claim = { organizationId, invoiceId: inv.id, customerId: inv.customer_id, dueDate: inv.due_date, grossOere: inv.gross_oere, postedThrough: inv.interest_posted_through };
    postedOere = (await postInterest(sql, claim, ctx.today)).totalOere;
  }
  const expectedOere = rowBalanceOere(inv) + postedOere;
  const totalOere = input.installments.reduce((sum, i) => sum + i.amountOere, 0);
  if (totalOere !== expectedOere) {
    throw new DomainError('installments_total_mismatch', `The instalments add up to ${totalOere} øre; the balance is ${expectedOere} øre.`, {
      details: [{ path: '/installments', message: `must add up to ${expectedOere} øre (they add up to ${totalOere})`, expectedOere }],
    });
  }
  const installments: Installment[] = input.installments.map((i, k) => ({ number: k + 1, dueDate: i.dueDate, amountOere: i.amountOere }));
  const id = uuidv7();
  await sql`
    INSERT INTO payment_plans (id, organization_id, invoice_id, customer_id, status, waive_interest, installments, total_oere, created_on)
    VALUES (${id}, ${organizationId}, ${inv.id}, ${inv.customer_id}, ${NEW_PAYMENT_PLAN_STATUS}, ${input.waiveInterest ?? false},
            ${sql.json(installments as never)}, ${totalOere}, ${ctx.today}::date)`;
  await recordPlanChange(sql, organizationId, { id, invoiceId: inv.id, customerId: inv.customer_id }, 'payment_plan.created');
  await scheduleDunning(sql, organizationId, inv.id, ctx.today);
  const plan = await latestPaymentPlan(sql, organizationId, inv.id);
  return toPaymentPlan(plan!, ctx.today);
}

/** The route's use case: 201 with the plan and its Location; the invoice's Dunning object is poked after the commit. */
export function makePaymentPlan(deps: { engine?: Pick<EngineClient, 'poke'> | undefined }, organizationId: string, invoiceId: string, input: PaymentPlanCreate): MutationUseCase {
  const engine = deps.engine;
  return async (tx) => {
    const plan = await createPaymentPlan(tx, organizationId, invoiceId, input);
    return {
      status: 201,
      data: plan,
      location: `/v1/invoices/${plan.invoiceId}/payment-plan`,
      ...(engine ? { afterCommit: () => engine.poke(WORK.dunning(organizationId, plan.invoiceId)) } : {}),
    };
  };
}
