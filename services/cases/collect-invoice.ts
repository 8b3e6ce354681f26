import type { CaseStatusView } from '../../contracts/cases.ts';
import { WORK } from '../../contracts/workflows.ts';
import { scheduleWake } from '../clock/wake-index.ts';
import { recordEvent } from '../events/record-event.ts';
import { rowBalanceOere } from '../invoices/invoice-balance.ts';
import { INVOICE_STATUS, isIssued, transitionInvoice } from '../invoices/invoice-lifecycle.ts';
import { recordTimeline } from '../invoices/record-timeline.ts';
import { isTimeBarred, LIMITATION_YEARS } from '../law/danish-law.ts';
import { planReminderCount } from '../reminders/reminder-policy.ts';
import { loadDunningContext, type DunningContext } from '../reminders/dunning-context.ts';
import { lockCustomerDunning } from '../reminders/lock-customer-dunning.ts';
import { scheduleDunning } from '../reminders/schedule-dunning.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { isUuid, uuidv7 } from '../shared/ids.ts';
import { caseStatusOf, INITIAL_CASE_STATE } from './case-lifecycle.ts';
import { PAYMENT_PLAN_STATUS } from '../payment-plans/payment-plan-lifecycle.ts';
import { findCaseStatusRow, toCaseStatus } from './case-queries.ts';

export interface CollectedInvoice {
  /** false: the invoice had a case already, and this is it (a repeat collect). */
  created: boolean;
  view: CaseStatusView;
}

/**
 * The reasons an invoice cannot be collected on `today`, in the order the API checks them
 * (docs/collections.md, "Collect: from an invoice to a case"); undefined when it can.
 */
export function collectRefusal(ctx: DunningContext): DomainError | undefined {
  const inv = ctx.invoice;
  if (!isIssued(inv.status)) return new DomainError('invoice_not_issued', 'Only an issued invoice can be handed over to debt collection.');
  if (inv.type !== 'invoice' || rowBalanceOere(inv) <= 0 || inv.status === INVOICE_STATUS.paid) {
    return new DomainError('invoice_already_paid', 'The invoice has nothing left to pay.');
  }
  // An agreed payment plan stands while it is active: it is cancelled (or breaks) before the claim is collected.
  if (ctx.paymentPlan?.status === PAYMENT_PLAN_STATUS.active) {
    return new DomainError('payment_plan_active', 'The invoice has an active payment plan; cancel it before handing the invoice over.');
  }
  if (inv.due_date === null || inv.due_date >= ctx.today) {
    return new DomainError('invoice_not_due', `The invoice is not past due: its due date is ${inv.due_date}, and today is ${ctx.today}.`);
  }
  // Payments cover the principal first: what is left is fees alone, and fees are never collected.
  if (ctx.facts.principalOutstandingOere <= 0) {
    return new DomainError('only_fees_outstanding', 'The principal is paid; only reminder fees are outstanding, and they are not collected.');
  }
  // Against the invoice's plan: its pinned flow's reminder steps (for the customer's type), or the settings'.
  const numbered = ctx.facts.taken.filter((t) => t.type === 'reminder').length;
  const planned = planReminderCount(ctx.plan);
  if (numbered < planned) {
    return new DomainError(
      'reminder_flow_incomplete',
      `The reminder plan is not complete: ${numbered} of its ${planned} reminders have been sent.`,
    );
  }
  if (isTimeBarred(inv.due_date, ctx.today)) {
    return new DomainError('claim_time_barred', `The claim is time-barred: its due date is ${LIMITATION_YEARS} years or more before today.`);
  }
  return undefined;
}

/**
 * `POST /v1/invoices/{id}/collect`, and the dunning engine's collect step, in the caller's transaction: a collection
 * case for the invoice, created once.
 *
 * Locks the customer's dunning lock and the invoice's row, as the engine does (so a collect and a reminder step of
 * the customer never interleave), then: the invoice's case if it has one (a repeat, or the loser of a race, which
 * waited for the winner's commit on the row lock); else the checks (`collectRefusal`); else, in one go, a case
 * numbered from the organisation's case series (locked after the invoice, as create-case.ts takes it), the invoice →
 * `collections` with `invoice.collections` and timeline `collections`, `sag.oprettet`, the end of the invoice's
 * dunning lifecycle (its wake-index row goes), and the case's wake-index row, due now: the Case object takes its
 * first step (the påkrav) as soon as it is poked.
 */
export async function collectInvoice(sql: Queryable, organizationId: string, invoiceId: string, now: Date): Promise<CollectedInvoice> {
  if (!isUuid(invoiceId)) throw notFound('invoice_not_found', 'invoice');
  await lockCustomerDunning(sql, organizationId, invoiceId);
  const ctx = await loadDunningContext(sql, organizationId, invoiceId);
  if (!ctx) throw notFound('invoice_not_found', 'invoice');
  const existing = await findInvoiceCase(sql, organizationId, ctx.invoice.id);
  if (existing) return { created: false, view: existing };
  const refusal = collectRefusal(ctx);
  if (refusal) throw refusal;

  const inv = ctx.invoice;
  const [series] = await sql<{ next_number: number }[]>`
    INSERT INTO case_number_series (organization_id, next_number) VALUES (${organizationId}, 1)
    ON CONFLICT (organization_id) DO UPDATE SET next_number = case_number_series.next_number
    RETURNING next_number::int AS next_number`;
  const caseNumber = Number(series!.next_number);
  const id = uuidv7();
  const state = INITIAL_CASE_STATE;
  await sql`UPDATE case_number_series SET next_number = ${caseNumber + 1} WHERE organization_id = ${organizationId}`;
  await sql`
    INSERT INTO collection_cases (organization_id, id, case_number, external_reference, invoice_id, state, created_at, updated_at)
    VALUES (${organizationId}, ${id}, ${caseNumber}, ${inv.external_reference}, ${inv.id}, ${state}, ${now}, ${now})`;
  await transitionInvoice(sql, organizationId, inv.id, 'handOver', {
    refused: () => new Error(`invoice ${inv.id} passed the collect checks but is not issued or overdue (${inv.status})`),
  });
  const balanceOere = rowBalanceOere(inv);
  await recordEvent(sql, {
    organizationId,
    type: 'invoice.collections',
    entityId: inv.id,
    data: { invoiceId: inv.id, number: inv.number, caseId: id, balanceOere, externalReference: inv.external_reference },
  });
  await recordTimeline(sql, organizationId, inv.id, 'collections', { caseId: id });
  const event = await recordEvent(sql, {
    organizationId,
    type: 'sag.oprettet',
    entityId: id,
    data: { caseNumber, state, status: caseStatusOf(state), fakturaId: inv.id, externalReference: inv.external_reference },
  });
  // The invoice's reminders end here; the case's lifecycle begins, due now.
  await scheduleDunning(sql, organizationId, inv.id, null);
  await scheduleWake(sql, organizationId, WORK.collectionCase(organizationId, id), now);
  return {
    created: true,
    view: toCaseStatus({
      id,
      case_number: caseNumber,
      external_reference: inv.external_reference,
      invoice_id: inv.id,
      state,
      paakrav_frist: null,
      event_version: event.sekvensnummer,
      created_at: now,
      updated_at: now,
    }),
  };
}

/** The status of the invoice's case, if it has one. */
async function findInvoiceCase(sql: Queryable, organizationId: string, invoiceId: string): Promise<CaseStatusView | undefined> {
  const [row] = await sql<{ id: string }[]>`
    SELECT id FROM collection_cases WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}`;
  if (!row) return undefined;
  const [status] = await findCaseStatusRow(sql, organizationId, { id: row.id });
  return status ? toCaseStatus(status) : undefined;
}
