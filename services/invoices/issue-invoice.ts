import type { IssueBody } from '../../contracts/invoices.ts';
import type { DocumentStore } from '../documents/document-store.ts';
import type { PdfRenderer } from '../documents/pdf-renderer.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { addDays, type Clock } from '../shared/clock.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { findInvoiceRow, type InvoiceRow, type LineRow } from './invoice-queries.ts';
import { computeTotals } from './invoice-totals.ts';
import { fikPaymentId } from '../payments/fik-payment-id.ts';
import { loadBuyer, loadSeller, printedBuyer, printedSeller, type BuyerSnapshot, type SellerSnapshot } from './document-parties.ts';
import type { ExemptionReason, InvoiceDocumentView } from './invoice-document.ts';
import { notEditable } from './replace-invoice.ts';
import { assertSellerDetailsComplete } from '../organizations/seller-details.ts';
import { INVOICE_LIFECYCLE, INVOICE_STATUS, openStatuses, transitionInvoice } from './invoice-lifecycle.ts';
import { lightLogoNow } from '../branding/document-logo.ts';
import { eInvoiceAddress } from '../customers/einvoice-address.ts';

export interface IssueDeps {
  keyring: Keyring;
  pdf: PdfRenderer;
  documents: DocumentStore;
  clock: Clock;
}

/**
 * Takes the organisation's next number. The series row stays locked until the caller's transaction ends, so
 * concurrent issues queue here and a rolled-back issue returns its number: no gaps, no duplicates.
 */
export async function takeNextNumber(sql: Queryable, organizationId: string): Promise<number> {
  const [row] = await sql<{ number: number }[]>`
    INSERT INTO number_series (organization_id, next_number) VALUES (${organizationId}, 2)
    ON CONFLICT (organization_id) DO UPDATE SET next_number = number_series.next_number + 1
    RETURNING next_number - 1 AS number`;
  return row!.number;
}

/**
 * A customer's balance figures sum its open invoices, and each must stay a JSON integer the API carries exactly, like
 * every invoice total (invoice-totals.ts): an issue that could take what the customer owes beyond 2^53 − 1 øre is
 * refused. The bound counts every open or issuing invoice at its gross plus every reminder fee the customer has;
 * payments and credit notes only lower it. An organisation's issues queue on its number series, which the caller holds.
 */
async function assertCustomerTotalRepresentable(sql: Queryable, organizationId: string, customerId: string, grossOere: number): Promise<void> {
  // Open invoices and issuing ones apart: the first term is read from the partial index of open invoices.
  const [owed] = await sql<{ total: string }[]>`
    SELECT (
      (SELECT coalesce(sum(gross_oere), 0) FROM invoices
        WHERE organization_id = ${organizationId} AND customer_id = ${customerId} AND type = 'invoice' AND status IN ${openStatuses(sql)})
      + (SELECT coalesce(sum(gross_oere), 0) FROM invoices
        WHERE organization_id = ${organizationId} AND customer_id = ${customerId} AND type = 'invoice' AND status IN ${INVOICE_LIFECYCLE.in(sql, [INVOICE_STATUS.issuing])})
      + (SELECT coalesce(sum(amount_oere), 0) FROM invoice_fees WHERE organization_id = ${organizationId} AND customer_id = ${customerId})
    )::text AS total`;
  if (BigInt(owed!.total) + BigInt(grossOere) > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new DomainError(
      'amount_out_of_range',
      `Issuing this invoice could take what the customer owes beyond ${Number.MAX_SAFE_INTEGER} øre, the largest amount the API represents exactly.`,
    );
  }
}

/**
 * An invoice to a customer with an e-invoice address must carry the buyer's reference or order number: Peppol's rule
 * R003 demands one, and Danish public buyers route their invoices by it. Checked before the number is taken.
 */
export function assertBuyerReference(buyer: BuyerSnapshot, row: Pick<InvoiceRow, 'buyer_reference' | 'order_reference'>): void {
  if (!eInvoiceAddress(buyer) || row.buyer_reference || row.order_reference) return;
  throw new DomainError(
    'buyer_reference_required',
    "The customer receives e-invoices: give the invoice the buyer's reference (buyerReference) or order number (orderReference) before issuing it.",
    { details: [{ path: '/buyerReference', message: 'is required (or orderReference) for a customer with an e-invoice address' }] },
  );
}

export function documentView(
  kind: 'invoice' | 'creditNote',
  number: number,
  issueDate: string,
  dueDate: string | null,
  seller: SellerSnapshot | InvoiceDocumentView['seller'],
  buyer: BuyerSnapshot,
  row: Pick<InvoiceRow, 'heading' | 'message' | 'customer_reference' | 'sender_reference' | 'buyer_reference' | 'order_reference'>,
  lines: LineRow[],
  credits: InvoiceDocumentView['credits'],
): InvoiceDocumentView {
  const totals = computeTotals(
    lines.map((l) => ({
      quantity: Number(l.quantity),
      unitPriceOere: l.unit_price_oere,
      vatRateBps: l.vat_rate_bps,
      vatExemptionReason: l.vat_exemption_reason,
      discount: l.discount_type ? { type: l.discount_type, value: l.discount_value! } : null,
    })),
  );
  return {
    language: buyer.language,
    kind,
    number,
    issueDate,
    dueDate,
    seller: printedSeller(seller as SellerSnapshot),
    buyer: printedBuyer(buyer),
    heading: row.heading,
    message: row.message,
    customerReference: row.customer_reference,
    senderReference: row.sender_reference,
    buyerReference: row.buyer_reference,
    orderReference: row.order_reference,
    lines: lines.map((l) => ({
      description: l.description,
      quantity: l.quantity,
      unit: l.unit,
      unitPriceOere: l.unit_price_oere,
      discount: l.discount_type ? { type: l.discount_type, value: l.discount_value! } : null,
      discountOere: l.discount_oere,
      netOere: l.net_oere,
      vatOere: l.vat_oere,
      vatRateBps: l.vat_rate_bps,
      vatExemptionReason: l.vat_exemption_reason as ExemptionReason | null,
    })),
    vatSummary: totals.vatSummary,
    exemptSummary: totals.exemptSummary as InvoiceDocumentView['exemptSummary'],
    netOere: totals.netOere,
    vatOere: totals.vatOere,
    grossOere: totals.grossOere,
    credits,
  };
}

export interface IssueRequest {
  /** The request that issues: its response is stored under this key when the issue finishes, whoever finishes it. */
  idempotencyKey: string;
  requestHash: Buffer;
  responseStatus: number;
  responseLocation: string | null;
  /** send=true on create: the finishing transaction queues the mail too. */
  send: boolean;
}

/**
 * Step 1 of issuing, in the caller's short transaction: checks the draft, takes the organisation's next number
 * and freezes the invoice (status 'issuing': number, dates, seller and buyer as printed). The PDF is rendered after
 * this commits, outside any transaction, and `finishIssue` completes the issue. Readers see a draft that can no
 * longer be edited until then, never an issued invoice without its PDF. The series row is locked only for the
 * moments of this transaction, so one organisation's issues render in parallel; a reserved number is never given
 * back (every reservation is finished), so the series keeps no gap and no duplicate.
 */
export async function reserveIssue(
  sql: Queryable,
  deps: Pick<IssueDeps, 'keyring' | 'clock'>,
  organizationId: string,
  id: string,
  body: IssueBody,
  request: IssueRequest,
): Promise<void> {
  const row = await findInvoiceRow(sql, organizationId, id, { lock: true });
  if (!row) throw notFound('invoice_not_found', 'invoice');
  if (row.status !== INVOICE_STATUS.draft || row.type !== 'invoice') throw notEditable();
  const seller = await loadSeller(sql, organizationId);
  // A guard before the number is taken: a refusal uses no number, and its transaction leaves nothing behind.
  assertSellerDetailsComplete(seller);
  const buyer = await loadBuyer(sql, deps.keyring, organizationId, row.customer_id);
  assertBuyerReference(buyer, row);
  const issueDate = body.issueDate ?? (await deps.clock.today(organizationId));
  const dueDate = body.dueDate ?? row.due_date ?? addDays(issueDate, row.payment_terms_days ?? seller.defaultPaymentTermsDays);
  // A due date in the past is allowed (an invoice issued late is overdue at once); one past year 9999 is not.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(dueDate)) {
    throw new DomainError('invalid_due_date', 'The due date would fall after the year 9999.', {
      details: [{ path: '/dueDate', message: 'must be a date up to 9999-12-31' }],
    });
  }
  const number = await takeNextNumber(sql, organizationId);
  // Under the series lock, so that two issues for one customer cannot both pass.
  await assertCustomerTotalRepresentable(sql, organizationId, row.customer_id, row.gross_oere);
  // The FI-kort +71 payment id (docs/bank-payments.md), when the organisation has an FI creditor number now: it
  // is the invoice's for life, with the creditor number it was issued under, whatever the organisation sets later.
  const creditor = sql`(SELECT o.fi_creditor_number FROM organizations o WHERE o.id = ${organizationId})`;
  await transitionInvoice(sql, organizationId, id, 'reserveIssue', {
    set: sql`number = ${number}, issue_date = ${issueDate}, due_date = ${dueDate},
      fik_creditor_number = ${creditor}, fik_payment_id = CASE WHEN ${creditor} IS NOT NULL THEN ${fikPaymentId(number)} END,
      seller_snapshot = ${sql.json(printedSeller(seller) as never)}, buyer_snapshot = ${sql.json(printedBuyer(buyer) as never)},
      logo_sha256 = ${lightLogoNow(sql, organizationId)}`,
    refused: notEditable,
  });
  await sql`
    INSERT INTO invoice_issues (invoice_id, organization_id, idempotency_key, request_hash, response_status, response_location, send, language)
    VALUES (${id}, ${organizationId}, ${request.idempotencyKey}, ${request.requestHash}, ${request.responseStatus},
            ${request.responseLocation}, ${request.send}, ${buyer.language})`;
}
