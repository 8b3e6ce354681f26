import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope } from '../../../../contracts/common.ts';
import { PaymentPlan, PaymentPlanCreate } from '../../../../contracts/payment-plans.ts';
import { makePaymentPlan } from '../../../payment-plans/create-payment-plan.ts';
import { cancelPlanNow } from '../../../payment-plans/cancel-payment-plan.ts';
import { getPaymentPlan } from '../../../payment-plans/get-payment-plan.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const InvoiceParams = Type.Object({ invoiceId: Type.String({ description: 'Invoice id (UUID)' }) }, { additionalProperties: false });
const tags = ['Payment plans'];

export function paymentPlanRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db } = deps;

  app.post<{ Params: { invoiceId: string }; Body: PaymentPlanCreate }>(
    '/invoices/:invoiceId/payment-plan',
    {
      config: { scope: 'invoices:write' },
      schema: {
        summary: 'Agree a payment plan (instalments) for an invoice',
        description:
          'The debtor pays the balance in 2..24 instalments; while the plan is `active` the invoice takes no reminder step. ' +
          'Payments fill the instalments in order; an instalment is `late` from the day after its due date, and one still not ' +
          'fully paid 10 days after its due date breaks the plan (`broken`): dunning resumes from that day under every ' +
          'statutory rule. Paying every instalment completes it. The interest accrued up to and including today is posted ' +
          'first; the amounts must then add up to the balance exactly (422 installments_total_mismatch with ' +
          '`details[0].expectedOere`). Due dates strictly increasing, the first not before today (400 validation_failed at ' +
          'the item\'s pointer). 422 invoice_not_issued (a draft), invoice_in_collections, invoice_already_paid; 409 ' +
          'payment_plan_exists while one is active. `waiveInterest: true`: no interest accrues while the plan is active.',
        tags,
        params: InvoiceParams,
        body: PaymentPlanCreate,
        response: { 201: Envelope(PaymentPlan) },
      },
    },
    (req, reply) => mutate(deps, req, reply, makePaymentPlan(deps, req.auth.organizationId, req.params.invoiceId, req.body)),
  );

  app.get<{ Params: { invoiceId: string } }>(
    '/invoices/:invoiceId/payment-plan',
    {
      config: { scope: 'invoices:read' },
      schema: {
        summary: "An invoice's payment plan (its latest)",
        description: '404 invoice_not_found for an unknown invoice, 404 payment_plan_not_found for an invoice that never had a plan.',
        tags,
        params: InvoiceParams,
        response: { 200: Envelope(PaymentPlan) },
      },
    },
    async (req) => ({ data: await db.read((sql) => getPaymentPlan(sql, req.auth.organizationId, req.params.invoiceId)), meta: {} }),
  );

  app.post<{ Params: { invoiceId: string } }>(
    '/invoices/:invoiceId/payment-plan/cancel',
    {
      config: { scope: 'invoices:write' },
      schema: {
        summary: "Cancel an invoice's active payment plan",
        description:
          'The plan becomes `cancelled` (422 invalid_transition unless it is `active`; 404 payment_plan_not_found for an ' +
          'invoice that never had one), and dunning resumes from today under every statutory rule.',
        tags,
        params: InvoiceParams,
        response: { 200: Envelope(PaymentPlan) },
      },
    },
    (req, reply) => mutate(deps, req, reply, cancelPlanNow(deps, req.auth.organizationId, req.params.invoiceId)),
  );
}
