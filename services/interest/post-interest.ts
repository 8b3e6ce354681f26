import { principalOutstandingOere } from '../invoices/invoice-balance.ts';
import { INVOICE_LIFECYCLE, INVOICE_STATUS } from '../invoices/invoice-lifecycle.ts';
import { findInvoiceRow, type InvoiceRow } from '../invoices/invoice-queries.ts';
import { loadReminderSettings } from '../reminders/reminder-settings.ts';
import { recordTimeline } from '../invoices/record-timeline.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { interestPieces, type InterestPiece, type PrincipalReduction } from '../reminders/interest-policy.ts';
import { loadReferenceRates } from './reference-rates.ts';
import { waivedSpans } from '../payment-plans/payment-plan-policy.ts';
import { waivingPlans } from '../payment-plans/payment-plan-queries.ts';

/** The invoice a posting is for, as its locked row was read. */
export interface InterestClaim {
  organizationId: string;
  invoiceId: string;
  customerId: string;
  dueDate: string;
  grossOere: number;
  /** invoices.interest_posted_through as read under the lock. */
  postedThrough: string | null;
}

export interface PostedInterest {
  pieces: InterestPiece[];
  totalOere: number;
}

/**
 * Posts the late-payment interest accrued on an invoice since its last posting (or its due date) up to and including
 * `through` (docs/reminders.md, "Interest"): a reminder step on its date, a hand-over on its date, the payment or
 * credit note that clears the principal on its date. In the caller's transaction, with the invoice's row locked and
 * the organisation's `lateInterest` already known to be `statutory`.
 *
 * Each half-year piece becomes a claim item (an `invoice_fees` row of kind `interest`, with its days, rate and the
 * reference-rate row it was charged at) and an `interest_posted` timeline entry; the invoice remembers `through`, so
 * the next posting starts the day after and no day is charged twice, whatever retries the caller's step sees (a
 * repeated step finds the day posted and adds nothing). The rates read are held (KEY SHARE) until commit.
 */
export async function postInterest(sql: Queryable, claim: InterestClaim, through: string, at?: Date, reminderId: string | null = null): Promise<PostedInterest> {
  if (claim.postedThrough !== null && claim.postedThrough >= through) return { pieces: [], totalOere: 0 };
  const [rates, reductions, plans] = await Promise.all([
    loadReferenceRates(sql, { forPosting: true }),
    principalReductions(sql, claim),
    waivingPlans(sql, claim.organizationId, claim.invoiceId),
  ]);
  // The days a payment plan waived are not charged (payment-plan-policy.ts).
  const facts = { dueDate: claim.dueDate, grossOere: claim.grossOere, reductions, postedThrough: claim.postedThrough, waived: waivedSpans(plans) };
  const pieces = interestPieces(facts, rates, through);
  for (const piece of pieces) {
    await sql`
      INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere, interest_from, interest_to, rate_bp, rate_from, reminder_id)
      VALUES (${uuidv7()}, ${claim.organizationId}, ${claim.invoiceId}, ${claim.customerId}, 'interest', ${piece.amountOere},
              ${piece.fromDate}::date, ${piece.toDate}::date, ${piece.rateBp}, ${piece.rateFrom}::date, ${reminderId})`;
    await recordTimeline(sql, claim.organizationId, claim.invoiceId, 'interest_posted', {
      amountOere: piece.amountOere,
      fromDate: piece.fromDate,
      toDate: piece.toDate,
      rateBp: piece.rateBp,
    }, at);
  }
  await sql`
    UPDATE invoices SET interest_posted_through = ${through}::date
    WHERE organization_id = ${claim.organizationId} AND id = ${claim.invoiceId}
      AND (interest_posted_through IS NULL OR interest_posted_through < ${through}::date)`;
  return { pieces, totalOere: pieces.reduce((sum, p) => sum + p.amountOere, 0) };
}

/** What lowered the invoice's principal, dated: its payments, and the credit note that credits it (on its issue date). */
async function principalReductions(sql: Queryable, claim: InterestClaim): Promise<PrincipalReduction[]> {
  return sql<PrincipalReduction[]>`
    SELECT payment_date::text AS date, amount_oere::bigint::float8 AS "amountOere" FROM payments
    WHERE organization_id = ${claim.organizationId} AND invoice_id = ${claim.invoiceId}
    UNION ALL
    SELECT issue_date::text, gross_oere::float8 FROM invoices
    WHERE organization_id = ${claim.organizationId} AND credits_invoice_id = ${claim.invoiceId} AND issue_date IS NOT NULL
      AND status NOT IN ${INVOICE_LIFECYCLE.in(sql, [INVOICE_STATUS.issuing])}`;
}

/**
 * The payment or credit note that clears an invoice's principal posts the interest accrued up to its date first
 * (docs/reminders.md, "Interest"), so what it settles against includes it; later days accrue nothing (no principal).
 * Only an overdue invoice of an organisation charging statutory interest, and only when `reducesByOere` reaches the
 * principal outstanding. In the caller's transaction with the invoice's row locked; answers the interest posted, or
 * null when nothing was posted through `on` (the rules above do not apply).
 */
export async function postInterestOnSettlement(
  sql: Queryable,
  organizationId: string,
  row: Pick<InvoiceRow, 'id' | 'type' | 'customer_id' | 'due_date' | 'gross_oere' | 'paid_oere' | 'credited_oere' | 'interest_posted_through'>,
  on: string,
  reducesByOere: number,
  at?: Date,
): Promise<number | null> {
  if (row.type !== 'invoice' || row.due_date === null || on <= row.due_date) return null;
  const principal = principalOutstandingOere({ grossOere: row.gross_oere, paidOere: row.paid_oere, creditedOere: row.credited_oere });
  if (principal === 0 || reducesByOere < principal) return null;
  const settings = await loadReminderSettings(sql, organizationId);
  if (settings.lateInterest !== 'statutory') return null;
  const claim = { organizationId, invoiceId: row.id, customerId: row.customer_id, dueDate: row.due_date, grossOere: row.gross_oere, postedThrough: row.interest_posted_through };
  return (await postInterest(sql, claim, on, at)).totalOere;
}

/**
 * The hand-over of an invoice's collection case posts the interest accrued up to the hand-over date (docs/reminders.md,
 * "Interest"), before the hand-over document is read, so the partner receives it as a claim item. Its own
 * transaction, with the invoice's row locked; repeated (a retried hand-over) it finds the day posted and adds nothing.
 * A case from POST /v1/cases has no invoice and accrues nothing here.
 */
export async function postInterestAtHandOver(sql: Queryable, organizationId: string, caseId: string, handedOverOn: string): Promise<number> {
  const [c] = await sql<{ invoice_id: string | null }[]>`SELECT invoice_id FROM collection_cases WHERE organization_id = ${organizationId} AND id = ${caseId}`;
  if (!c?.invoice_id) return 0;
  const row = await findInvoiceRow(sql, organizationId, c.invoice_id, { type: 'invoice', lock: true });
  if (!row || row.due_date === null) return 0;
  const settings = await loadReminderSettings(sql, organizationId);
  if (settings.lateInterest !== 'statutory') return 0;
  const claim = { organizationId, invoiceId: row.id, customerId: row.customer_id, dueDate: row.due_date, grossOere: row.gross_oere, postedThrough: row.interest_posted_through };
  return (await postInterest(sql, claim, handedOverOn)).totalOere;
}
