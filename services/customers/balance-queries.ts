import type { Queryable } from '../shared/db.ts';
import { balanceTerms } from '../invoices/invoice-queries.ts';
import { INVOICE_LIFECYCLE, INVOICE_STATUS, notSettledStatuses, openStatuses } from '../invoices/invoice-lifecycle.ts';

/**
 * The customer balance (docs/api-conventions.md, "Customer balance"): computed from invoices, credit notes, fees and
 * payments on every read, never stored. Each invoice's balance is gross + reminder fees − paid − credited, the SQL
 * function `invoice_balance_oere` (services/invoices/invoice-balance.ts), exactly as the invoice itself shows it; the
 * customer balance sums those:
 *
 * - outstandingOere: the positive balances of issued invoices (whatever their status);
 * - creditOere: the negative balances (≤ 0): overpayments and credits the customer holds, not netted;
 * - overdue: an open invoice (issued, overdue or in collections) with a positive balance whose due date is before
 *   today; overdueOere, overdueCount, oldestDueDate (the earliest such due date) and daysOverdue (today − that date)
 *   describe those. An invoice in status `paid` has a balance ≤ 0 by construction, so it never counts;
 * - collectionsOere: the positive balances of invoices handed over to debt collection;
 * - pastDue: overdueOere ≥ the organisation's amount threshold and daysOverdue ≥ its days threshold,
 *   with at least one invoice overdue, so a threshold of 0 never makes a customer who owes nothing overdue.
 */
export interface PastDueThresholds {
  amountOere: number;
  days: number;
}

export interface OverdueFigures {
  overdueOere: number;
  overdueCount: number;
  daysOverdue: number;
}

export function isPastDue(b: OverdueFigures, t: PastDueThresholds): boolean {
  return b.overdueCount > 0 && b.overdueOere >= t.amountOere && b.daysOverdue >= t.days;
}

/** Whole days from one calendar date to another ('YYYY-MM-DD', no time zone involved). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/*
 * An invoice is open (it can be overdue, and make its customer past due) in status issued, overdue or collections
 * (invoice-lifecycle.ts). The statuses are written into the SQL as literals, not parameters (`openStatuses`): the
 * partial indexes below (004_payments.sql) are only usable when the planner can see that the query's condition
 * implies theirs, also in a generic plan.
 */

export interface CustomerBalanceRow {
  past_due_amount_oere: number;
  past_due_days: number;
  outstanding_oere: number;
  credit_oere: number;
  overdue_oere: number;
  overdue_count: number;
  oldest_due_date: string | null;
  collections_oere: number;
}

/**
 * One customer's balance figures and the organisation's thresholds, in one statement; no row when the customer does
 * not exist in the organisation.
 *
 * A customer with a long history has thousands of settled invoices, each with a balance of exactly 0, which add
 * nothing to any figure. So the statement computes the balance of the invoices that can differ from 0 only, each
 * kind found in a small index of its own (004_payments.sql):
 * - open invoices (issued, overdue, in collections);
 * - invoices with a payment that left a surplus: every payment that takes a balance below 0, or arrives once the
 *   invoice is settled, has one (payment-outcome.ts);
 * - credited invoices.
 * Every other issued invoice is `paid` with a balance of exactly 0: `paid` is set only by the payment that brings the
 * balance to 0 or below (book-payment.ts); after that a further payment leaves a surplus, a credit note is a credit
 * note, a fee is refused (fees go on open invoices only) and payments are never changed or removed (both enforced
 * by triggers). So the cost follows the open and exceptional items, not the length of the history.
 */
export async function customerBalanceRow(
  sql: Queryable,
  organizationId: string,
  customerId: string,
  today: string,
): Promise<CustomerBalanceRow | undefined> {
  const [row] = await sql<CustomerBalanceRow[]>`
    WITH fees AS (
      SELECT invoice_id, sum(amount_oere) AS total FROM invoice_fees
      WHERE organization_id = ${organizationId} AND customer_id = ${customerId}
      GROUP BY invoice_id
    ), credited AS (
      SELECT credits_invoice_id AS invoice_id, sum(gross_oere) AS total FROM invoices
      WHERE organization_id = ${organizationId} AND customer_id = ${customerId} AND type = 'creditNote' AND status NOT IN ${INVOICE_LIFECYCLE.in(sql, [INVOICE_STATUS.issuing])}
      GROUP BY credits_invoice_id
    ), open AS MATERIALIZED (
      SELECT id, status, due_date, gross_oere FROM invoices
      WHERE organization_id = ${organizationId} AND customer_id = ${customerId} AND type = 'invoice'
        AND status IN ${openStatuses(sql)}
    ), settled_candidates AS (
      SELECT invoice_id AS id FROM payments
      WHERE organization_id = ${organizationId} AND customer_id = ${customerId} AND surplus_oere > 0
      UNION
      SELECT invoice_id FROM credited
      EXCEPT
      SELECT id FROM open
    ), looked_up AS MATERIALIZED (
      -- The open invoices straight from their covering index, the few settled candidates by primary key, then each
      -- one's payments from their index: never a scan of the whole history. Materialised, so the planner neither
      -- flattens the look-ups into a scan nor repeats the joins below once per candidate. Fees and credit notes are
      -- few; they are read for the whole customer from one index range each and joined.
      SELECT x.id, x.status, x.due_date, x.gross_oere,
             coalesce((SELECT sum(p.amount_oere) FROM payments p
                       WHERE p.organization_id = ${organizationId} AND p.invoice_id = x.id), 0) AS paid
      FROM (
        SELECT id, status, due_date, gross_oere FROM open
        UNION ALL
        SELECT inv.id, inv.status, inv.due_date, inv.gross_oere
        FROM settled_candidates
        CROSS JOIN LATERAL (
          SELECT i.id, i.status, i.due_date, i.gross_oere FROM invoices i
          WHERE i.organization_id = ${organizationId} AND i.id = settled_candidates.id
            AND i.customer_id = ${customerId} AND i.type = 'invoice'
            AND i.status NOT IN ${notSettledStatuses(sql)}
          OFFSET 0
        ) inv
      ) x
    ), balances AS (
      SELECT b.*, b.status IN ${openStatuses(sql)} AND b.due_date < ${today}::date AND b.balance > 0 AS overdue
      FROM (
        SELECT i.status, i.due_date, invoice_balance_oere(i.gross_oere, f.total, i.paid, c.total) AS balance
        FROM looked_up i
        LEFT JOIN fees f ON f.invoice_id = i.id
        LEFT JOIN credited c ON c.invoice_id = i.id
      ) b
    ), figures AS (
      SELECT
        coalesce(sum(balance) FILTER (WHERE balance > 0), 0)::bigint AS outstanding_oere,
        coalesce(sum(balance) FILTER (WHERE balance < 0), 0)::bigint AS credit_oere,
        coalesce(sum(balance) FILTER (WHERE overdue), 0)::bigint AS overdue_oere,
        (count(*) FILTER (WHERE overdue))::int AS overdue_count,
        min(due_date) FILTER (WHERE overdue) AS oldest_due_date,
        coalesce(sum(balance) FILTER (WHERE status IN ${INVOICE_LIFECYCLE.in(sql, [INVOICE_STATUS.collections])} AND balance > 0), 0)::bigint AS collections_oere
      FROM balances
    )
    SELECT o.past_due_amount_oere, o.past_due_days, figures.*
    FROM customers cu
    JOIN organizations o ON o.id = cu.organization_id
    CROSS JOIN figures
    WHERE cu.organization_id = ${organizationId} AND cu.id = ${customerId}`;
  return row;
}

/**
 * The ids of the organisation's customers that are past due today, as a sub-select for `id IN (…)`. The same rule
 * as the balance, over the organisation's open invoices past their due date (index invoices_open_by_due_date), each
 * invoice's balance from per-invoice look-ups (there are few such invoices next to the whole history).
 */
export const pastDueCustomerIds = (sql: Queryable, organizationId: string, today: string) => {
  const t = balanceTerms(sql);
  return sql`
  SELECT o.customer_id FROM (
    SELECT i.customer_id, i.due_date, invoice_balance_oere(i.gross_oere, ${t.fees}, ${t.paid}, ${t.credited}) AS balance
    FROM invoices i
    WHERE i.organization_id = ${organizationId} AND i.type = 'invoice' AND i.status IN ${openStatuses(sql)}
      AND i.due_date < ${today}::date
  ) o
  WHERE o.balance > 0
  GROUP BY o.customer_id
  HAVING sum(o.balance) >= (SELECT past_due_amount_oere FROM organizations WHERE id = ${organizationId})
     AND min(o.due_date) <= ${today}::date - (SELECT past_due_days FROM organizations WHERE id = ${organizationId})`;
};
