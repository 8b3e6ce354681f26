import { Type, type Static } from 'typebox';
import { DateString, DateTimeString, Uuid } from './common.ts';

/** One instalment as agreed: its due date and amount (at least 1 kr). */
export const InstallmentInput = Type.Object(
  {
    dueDate: DateString,
    amountOere: Type.Integer({ minimum: 100, maximum: Number.MAX_SAFE_INTEGER, description: 'Amount in øre, at least 100' }),
  },
  { additionalProperties: false },
);

/**
 * POST /v1/invoices/{id}/payment-plan. Dates strictly increasing, the first not before the organisation's business
 * today (400 validation_failed at the item's pointer); the amounts add up exactly to the invoice's balance once the
 * interest accrued up to today is posted (422 installments_total_mismatch otherwise).
 */
export const PaymentPlanCreate = Type.Object(
  {
    installments: Type.Array(InstallmentInput, { minItems: 2, maxItems: 24, description: '2..24 instalments, due dates strictly increasing' }),
    waiveInterest: Type.Optional(Type.Boolean({ default: false, description: 'No late-payment interest accrues while the plan is active' })),
  },
  { additionalProperties: false, title: 'PaymentPlanCreate' },
);
export type PaymentPlanCreate = Static<typeof PaymentPlanCreate>;

export const Installment = Type.Object(
  {
    number: Type.Integer({ minimum: 1, description: '1, 2, 3… in due-date order' }),
    dueDate: DateString,
    amountOere: Type.Integer(),
    paidOere: Type.Integer({ description: 'What payments have filled of it (the instalments fill in order)' }),
    status: Type.Union([Type.Literal('open'), Type.Literal('paid'), Type.Literal('late')], {
      description: '`late` from the day after its due date while not fully paid',
    }),
  },
  { title: 'Installment' },
);

export const PaymentPlan = Type.Object(
  {
    id: Uuid,
    invoiceId: Uuid,
    status: Type.Union([Type.Literal('active'), Type.Literal('completed'), Type.Literal('broken'), Type.Literal('cancelled')]),
    waiveInterest: Type.Boolean(),
    installments: Type.Array(Installment),
    createdAt: DateTimeString,
    endedAt: Type.Union([DateTimeString, Type.Null()], { description: 'When it was completed, broken or cancelled; null while active' }),
  },
  { title: 'PaymentPlan' },
);
export type PaymentPlan = Static<typeof PaymentPlan>;
