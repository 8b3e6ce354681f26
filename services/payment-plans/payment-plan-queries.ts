import type { PaymentPlan } from '../../contracts/payment-plans.ts';
import type { EventType } from '../../contracts/events.ts';
import { recordEvent } from '../events/record-event.ts';
import { recordTimeline } from '../invoices/record-timeline.ts';
import type { Queryable } from '../shared/db.ts';
import { fillInstallments, type Installment } from './payment-plan-policy.ts';
import { PAYMENT_PLAN_LIFECYCLE, PAYMENT_PLAN_STATUS, type PaymentPlanStatus } from './payment-plan-lifecycle.ts';

/** A payment_plans row as the use cases read it. */
export interface PaymentPlanRow {
  id: string;
  invoice_id: string;
  customer_id: string;
  status: PaymentPlanStatus;
  waive_interest: boolean;
  installments: Installment[];
  total_oere: number;
  paid_oere: number;
  created_on: string;
  ended_on: string | null;
  created_at: Date;
  ended_at: Date | null;
}

const PLAN_COLUMNS = `id, invoice_id, customer_id, status, waive_interest, installments, total_oere::float8 AS total_oere,
  paid_oere::float8 AS paid_oere, created_on::text AS created_on, ended_on::text AS ended_on, created_at, ended_at`;

/** The invoice's latest plan (any status), or undefined when it never had one. */
export async function latestPaymentPlan(sql: Queryable, organizationId: string, invoiceId: string): Promise<PaymentPlanRow | undefined> {
  const [row] = await sql<PaymentPlanRow[]>`
    SELECT ${sql.unsafe(PLAN_COLUMNS)} FROM payment_plans
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}
    ORDER BY created_at DESC, id DESC LIMIT 1`;
  return row;
}

/** The plan as the API shows it, its instalments filled and dated against `today` (the organisation's business today). */
export function toPaymentPlan(row: PaymentPlanRow, today: string): PaymentPlan {
  return {
    id: row.id,
    invoiceId: row.invoice_id,
    status: row.status,
    waiveInterest: row.waive_interest,
    installments: fillInstallments(row.installments, row.paid_oere, today),
    createdAt: row.created_at.toISOString(),
    endedAt: row.ended_at?.toISOString() ?? null,
  };
}

/**
 * The plans of invoice `i` that waive interest, as SQL over the alias `i`: a JSON array of [createdOn, endedOn|null]
 * (payment-plan-policy.ts's `waivedSpans` reads them), for the interest read with an invoice.
 */
export const waivingPlansJson = (sql: Queryable) => sql`(
  SELECT coalesce(json_agg(json_build_array(pp.created_on::text, pp.ended_on::text) ORDER BY pp.created_on), '[]'::json)
  FROM payment_plans pp WHERE pp.organization_id = i.organization_id AND pp.invoice_id = i.id AND pp.waive_interest)`;

/** The same plans of one invoice, for a posting. */
export async function waivingPlans(sql: Queryable, organizationId: string, invoiceId: string): Promise<{ waiveInterest: boolean; createdOn: string; endedOn: string | null }[]> {
  return sql<{ waiveInterest: boolean; createdOn: string; endedOn: string | null }[]>`
    SELECT true AS "waiveInterest", created_on::text AS "createdOn", ended_on::text AS "endedOn" FROM payment_plans
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND waive_interest
    ORDER BY created_on`;
}

/** The invoice's active plan's id, as SQL over the alias `i` (null when none). */
export const activePlanIdSql = (sql: Queryable) => sql`(
  SELECT pp.id FROM payment_plans pp
  WHERE pp.organization_id = i.organization_id AND pp.invoice_id = i.id AND pp.status IN ${PAYMENT_PLAN_LIFECYCLE.in(sql, [PAYMENT_PLAN_STATUS.active])})`;

/**
 * A plan's change as the integrator hears of it: the `payment_plan.*` event (in the invoice's block) and the timeline
 * entry of the same name, in the caller's transaction (the invoice's row is locked by every caller).
 */
export async function recordPlanChange(
  sql: Queryable,
  organizationId: string,
  plan: { id: string; invoiceId: string; customerId: string },
  type: Extract<EventType, `payment_plan.${string}`>,
  at?: Date,
): Promise<void> {
  await recordEvent(sql, { organizationId, type, entityId: plan.invoiceId, data: { paymentPlanId: plan.id, invoiceId: plan.invoiceId, customerId: plan.customerId } });
  await recordTimeline(sql, organizationId, plan.invoiceId, type, { paymentPlanId: plan.id }, at);
}
