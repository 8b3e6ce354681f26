import type { Invoice, InvoiceLineInput } from '../../contracts/invoices.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { rowBalanceOere } from './invoice-balance.ts';
import { computeTotals } from './invoice-totals.ts';
import { INVOICE_LIFECYCLE, INVOICE_STATUS, type InvoiceStatus } from './invoice-lifecycle.ts';
import { fikOf } from '../payments/fik-payment-id.ts';
import { interestPieces } from '../reminders/interest-policy.ts';
import { waivedSpans } from '../payment-plans/payment-plan-policy.ts';
import { waivingPlansJson } from '../payment-plans/payment-plan-queries.ts';

/** An invoice row with the amounts derived from other tables (payments, credit notes, fees). */
export interface InvoiceRow {
  id: string;
  type: 'invoice' | 'creditNote';
  status: InvoiceStatus;
  number: number | null;
  customer_id: string;
  issue_date: string | null;
  due_date: string | null;
  payment_terms_days: number | null;
  net_oere: number;
  vat_oere: number;
  gross_oere: number;
  paid_oere: number;
  credited_oere: number;
  /** Every claim item charged: reminder fees, posted interest, compensation (the balance's fees term). */
  fees_oere: number;
  interest_oere: number;
  compensation_oere: number;
  customer_reference: string | null;
  sender_reference: string | null;
  buyer_reference: string | null;
  order_reference: string | null;
  fik_payment_id: string | null;
  /** The last day late-payment interest has been posted through; null before the first posting. */
  interest_posted_through: string | null;
  /** What the accrued interest is computed from, for an open invoice of an organisation charging statutory interest; else null. */
  accrual: AccrualFacts | null;
  fik_creditor_number: string | null;
  message: string | null;
  heading: string | null;
  external_reference: string | null;
  metadata: Record<string, string> | null;
  credits_invoice_id: string | null;
  subscription_id: string | null;
  period_start: string | null;
  period_end: string | null;
  document_sha256: Buffer | null;
  created_at: Date;
  updated_at: Date;
  issued_at: Date | null;
  sent_at: Date | null;
  lines: LineRow[];
}

export interface LineRow {
  invoice_id: string;
  position: number;
  description: string;
  quantity: string;
  unit_price_oere: number;
  vat_rate_bps: number;
  vat_exemption_reason: string | null;
  discount_type: 'percent' | 'amount' | null;
  discount_value: number | null;
  discount_oere: number;
  account_id: string | null;
  unit: string | null;
  net_oere: number;
  vat_oere: number;
  gross_oere: number;
}

/**
 * The select list every invoice read uses. paidOere is the sum of the invoice's payments (all of each amount: an
 * overpayment takes the balance below 0, the customer's credit); creditedOere is the gross of the credit note that
 * credits this invoice; reminderFeeOere is the sum of its reminder fees. All are computed on every read
 * (docs/api-conventions.md, "Payments and balances"), never stored. The customer balance
 * (services/customers/balance-queries.ts) sums the same three sources.
 */
/**
 * The terms of invoice `i`'s balance (gross + reminder fees − paid − credited, never stored), as SQL over the alias
 * `i`: what every reader sums the same way. The balance itself is `invoice_balance_oere` over them, or
 * `invoiceBalanceOere` of a row read (invoice-balance.ts).
 */
export const balanceTerms = (sql: Queryable) => ({
  paid: sql`coalesce((SELECT sum(p.amount_oere) FROM payments p
            WHERE p.organization_id = i.organization_id AND p.invoice_id = i.id), 0)`,
  credited: sql`coalesce((SELECT sum(c.gross_oere) FROM invoices c
            WHERE c.organization_id = i.organization_id AND c.credits_invoice_id = i.id AND c.status NOT IN ${INVOICE_LIFECYCLE.in(sql, [INVOICE_STATUS.issuing])}), 0)`,
  fees: sql`coalesce((SELECT sum(f.amount_oere) FROM invoice_fees f
            WHERE f.organization_id = i.organization_id AND f.invoice_id = i.id), 0)`,
});

/** The inputs of an open invoice's accrued interest, read with it (null unless its organisation charges statutory interest). */
export interface AccrualFacts {
  today: string;
  /** [payment date, amount] of each payment. */
  payments: [string, number][];
  /** [from, reference rate in bp] of each half-year, oldest first. */
  rates: [string, number][];
  /** [createdOn, endedOn | null] of each payment plan that waives interest (payment-plan-policy.ts's `waivedSpans`). */
  waiving: [string, string | null][];
}

/**
 * The accrued interest's inputs as one JSON value of invoice `i`: only for an open invoice (issued or overdue; one in
 * collections is the partner's) with a due date, of an organisation whose reminder settings say `statutory`; the
 * organisation's business today, the invoice's payments and the reference rates. Nothing is computed for anyone else.
 */
const accrualSelect = (sql: Queryable) => sql`(
  SELECT json_build_object(
           'today', business_today(i.organization_id)::text,
           'payments', (SELECT coalesce(json_agg(json_build_array(p.payment_date::text, p.amount_oere)), '[]'::json)
                        FROM payments p WHERE p.organization_id = i.organization_id AND p.invoice_id = i.id),
           'rates', (SELECT json_agg(json_build_array(r.from_date::text, r.reference_rate_bp) ORDER BY r.from_date) FROM reference_rates r),
           'waiving', ${waivingPlansJson(sql)})
  FROM reminder_settings rs
  WHERE rs.organization_id = i.organization_id AND rs.late_interest = 'statutory'
    AND i.type = 'invoice' AND i.due_date IS NOT NULL AND i.status IN ${INVOICE_LIFECYCLE.in(sql, [INVOICE_STATUS.issued, INVOICE_STATUS.overdue])})`;

/** Interest accrued and not yet posted, up to the business today the row was read with (interest-policy.ts). */
function accruedInterestOere(r: InvoiceRow): number {
  if (r.accrual === null || r.due_date === null || r.credited_oere > 0) return 0;
  const pieces = interestPieces(
    {
      dueDate: r.due_date,
      grossOere: r.gross_oere,
      reductions: r.accrual.payments.map(([date, amountOere]) => ({ date, amountOere: Number(amountOere) })),
      postedThrough: r.interest_posted_through,
      waived: waivedSpans((r.accrual.waiving ?? []).map(([createdOn, endedOn]) => ({ waiveInterest: true, createdOn, endedOn }))),
    },
    r.accrual.rates.map(([from, referenceRateBp]) => ({ from, referenceRateBp })),
    r.accrual.today,
  );
  return pieces.reduce((sum, p) => sum + p.amountOere, 0);
}

/** The sum of one kind of claim item on invoice `i` (the balance's fees term sums every kind). */
const feesOfKind = (sql: Queryable, kind: 'interest' | 'compensation') =>
  sql`coalesce((SELECT sum(f.amount_oere) FROM invoice_fees f
       WHERE f.organization_id = i.organization_id AND f.invoice_id = i.id AND f.kind = ${kind}), 0)`;

export const invoiceSelect = (sql: Queryable) => {
  const t = balanceTerms(sql);
  return sql`
  i.id, i.type, i.status, i.number, i.customer_id, i.issue_date, i.due_date, i.payment_terms_days,
  i.net_oere, i.vat_oere, i.gross_oere,
  ${t.paid}::bigint AS paid_oere, ${t.credited}::bigint AS credited_oere, ${t.fees}::bigint AS fees_oere, ${feesOfKind(sql, 'interest')}::bigint AS interest_oere,
  ${feesOfKind(sql, 'compensation')}::bigint AS compensation_oere,
  i.customer_reference, i.sender_reference, i.buyer_reference, i.order_reference, i.fik_payment_id, i.fik_creditor_number, i.interest_posted_through::text AS interest_posted_through, i.message, i.heading, i.external_reference, i.metadata,
  i.credits_invoice_id, i.subscription_id, i.period_start, i.period_end, i.document_sha256, i.created_at, i.updated_at, i.issued_at, i.sent_at,
  ${accrualSelect(sql)} AS accrual,
  -- Lines in the same statement as the header, so a reader never pairs a header with another version's lines.
  (SELECT coalesce(json_agg(json_build_object(
            'invoice_id', l.invoice_id, 'position', l.position, 'description', l.description, 'quantity', l.quantity::text,
            'unit_price_oere', l.unit_price_oere, 'vat_rate_bps', l.vat_rate_bps, 'vat_exemption_reason', l.vat_exemption_reason,
            'discount_type', l.discount_type, 'discount_value', l.discount_value, 'discount_oere', l.discount_oere,
            'account_id', l.account_id, 'unit', l.unit, 'net_oere', l.net_oere, 'vat_oere', l.vat_oere, 'gross_oere', l.gross_oere)
          ORDER BY l.position), '[]'::json)
   FROM invoice_lines l WHERE l.invoice_id = i.id) AS lines`;
};

export const LINE_COLUMNS = [
  'invoice_id', 'position', 'description', 'quantity', 'unit_price_oere', 'vat_rate_bps', 'vat_exemption_reason',
  'discount_type', 'discount_value', 'discount_oere', 'account_id', 'unit', 'net_oere', 'vat_oere', 'gross_oere',
] as const;

export function toInvoice(r: InvoiceRow, lines: LineRow[] = r.lines): Invoice {
  // A credit note is not payable: it is wholly "credited" by its own nature, so the balance formula gives 0.
  const credited = r.type === 'creditNote' ? r.gross_oere : r.credited_oere;
  // While its PDF is being rendered an invoice is not yet issued for any reader: it shows as a (locked) draft.
  const issuing = r.status === INVOICE_STATUS.issuing;
  return {
    id: r.id,
    type: r.type,
    status: r.status === INVOICE_STATUS.issuing ? INVOICE_STATUS.draft : r.status,
    number: issuing ? null : r.number,
    customerId: r.customer_id,
    issueDate: issuing ? null : r.issue_date,
    dueDate: r.due_date,
    paymentTermsDays: r.payment_terms_days,
    currency: 'DKK',
    lines: lines.map((l) => ({
      description: l.description,
      quantity: Number(l.quantity),
      unitPriceOere: l.unit_price_oere,
      vatRateBps: l.vat_rate_bps,
      vatExemptionReason: l.vat_exemption_reason as Invoice['lines'][number]['vatExemptionReason'],
      discount: l.discount_type ? { type: l.discount_type, value: l.discount_value! } : null,
      accountId: l.account_id,
      unit: l.unit,
      netOere: l.net_oere,
      vatOere: l.vat_oere,
      grossOere: l.gross_oere,
    })),
    netOere: r.net_oere,
    vatOere: r.vat_oere,
    grossOere: r.gross_oere,
    paidOere: r.paid_oere,
    creditedOere: credited,
    reminderFeeOere: r.fees_oere - r.interest_oere - r.compensation_oere,
    interestOere: r.interest_oere,
    compensationOere: r.compensation_oere,
    interestAccruedOere: accruedInterestOere(r),
    balanceOere: rowBalanceOere({ ...r, credited_oere: credited }),
    customerReference: r.customer_reference,
    senderReference: r.sender_reference,
    buyerReference: r.buyer_reference,
    orderReference: r.order_reference,
    fik: fikOf(r),
    message: r.message,
    heading: r.heading,
    externalReference: r.external_reference,
    metadata: r.metadata,
    creditsInvoiceId: r.credits_invoice_id,
    subscriptionId: r.subscription_id,
    periodStart: r.period_start,
    periodEnd: r.period_end,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    issuedAt: issuing ? null : (r.issued_at?.toISOString() ?? null),
    sentAt: r.sent_at?.toISOString() ?? null,
  };
}

export async function loadLines(sql: Queryable, invoiceIds: string[]): Promise<Map<string, LineRow[]>> {
  const byInvoice = new Map<string, LineRow[]>();
  if (invoiceIds.length === 0) return byInvoice;
  const rows = await sql<LineRow[]>`
    SELECT ${sql(LINE_COLUMNS)}, quantity::text AS quantity FROM invoice_lines
    WHERE invoice_id IN ${sql(invoiceIds)} ORDER BY invoice_id, position`;
  for (const r of rows) {
    const list = byInvoice.get(r.invoice_id) ?? [];
    list.push(r);
    byInvoice.set(r.invoice_id, list);
  }
  return byInvoice;
}

/** Reads one invoice (or credit note) of the organisation; `lock` takes the row for the rest of the transaction. */
export async function findInvoiceRow(
  sql: Queryable,
  organizationId: string,
  id: string,
  opts: { type?: 'invoice' | 'creditNote'; lock?: boolean } = {},
): Promise<InvoiceRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await sql<InvoiceRow[]>`
    SELECT ${invoiceSelect(sql)} FROM invoices i
    WHERE i.organization_id = ${organizationId} AND i.id = ${id}
      ${opts.type ? sql`AND i.type = ${opts.type}` : sql``}
    ${opts.lock ? sql`FOR UPDATE OF i` : sql``}`;
  return row;
}

export async function getInvoiceOrThrow(
  sql: Queryable,
  organizationId: string,
  id: string,
  type: 'invoice' | 'creditNote' = 'invoice',
): Promise<Invoice> {
  // /v1/invoices/{id} reads credit notes too (they share the store and the series); /v1/creditnotes/{id} only those.
  const row = await findInvoiceRow(sql, organizationId, id, type === 'creditNote' ? { type } : {});
  if (!row) throw type === 'invoice' ? notFound('invoice_not_found', 'invoice') : notFound('credit_note_not_found', 'credit note');
  return toInvoice(row);
}

/** Computes and writes a draft's lines; returns the header totals. */
export async function writeLines(sql: Queryable, organizationId: string, invoiceId: string, lines: InvoiceLineInput[]) {
  const totals = computeTotals(lines);
  const rows = lines.map((l, i) => {
    const a = totals.lines[i]!;
    return {
      organization_id: organizationId,
      invoice_id: invoiceId,
      position: i,
      description: l.description,
      quantity: a.quantity,
      unit_price_oere: l.unitPriceOere,
      vat_rate_bps: a.vatRateBps,
      vat_exemption_reason: l.vatExemptionReason ?? null,
      discount_type: l.discount?.type ?? null,
      discount_value: l.discount?.value ?? null,
      discount_oere: a.discountOere,
      account_id: l.accountId ?? null,
      unit: l.unit ?? null,
      net_oere: a.netOere,
      vat_oere: a.vatOere,
      gross_oere: a.grossOere,
    };
  });
  // invoiceId comes from a read scoped to the organisation and locked by the caller.
  await sql`DELETE FROM invoice_lines WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}`;
  await sql`INSERT INTO invoice_lines ${sql(rows as Record<string, unknown>[])}`;
  return totals;
}
