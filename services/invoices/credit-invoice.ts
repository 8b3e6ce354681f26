import type { Invoice } from '../../contracts/invoices.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { recordEvent } from '../events/record-event.ts';
import { reconcilePastDue } from '../customers/past-due-transitions.ts';
import { rowBalanceOere } from './invoice-balance.ts';
import { findInvoiceRow, getInvoiceOrThrow, loadLines } from './invoice-queries.ts';
import { loadBuyer, loadSeller } from './document-parties.ts';
import { postInterestOnSettlement } from '../interest/post-interest.ts';
import { endPaymentPlan } from '../payment-plans/cancel-payment-plan.ts';
import { latestPaymentPlan } from '../payment-plans/payment-plan-queries.ts';
import { documentView, takeNextNumber, type IssueDeps } from './issue-invoice.ts';
import { recordTimeline } from './record-timeline.ts';
import { assertSellerDetailsComplete } from '../organizations/seller-details.ts';
import { INVOICE_STATUS, isIssued } from './invoice-lifecycle.ts';
import { currentDocumentLogo } from '../branding/document-logo.ts';

const notCreditable = (why: string) => new DomainError('invoice_not_creditable', why);

/**
 * A full credit note for an issued invoice, issued and PDF-locked in the same transaction: numbered from the same
 * series, positive amounts (the type gives the direction), its PDF naming the original's number and date. Once per
 * invoice (a unique index backs the check). The original's creditedOere and balanceOere change in this transaction.
 *
 * Credit notes of one organisation are made one at a time across all API processes: the transaction starts by
 * taking a transaction-scoped advisory lock of the organisation (released by its commit or rollback, so a crashed
 * request cannot leave it held). The number series row would serialise them too, but only once each had locked its
 * own invoice; waiting for the advisory lock first, a queued credit note holds no row lock, so payments on its
 * invoice go on while it waits. It does hold its pooled connection while it waits, for as long as the credit notes
 * ahead of it take to render: acceptable because a process lets one credit note per organisation wait at a time
 * (queueCreditNote in credit-queue.ts), so the wait costs each process at most one connection per organisation.
 * Rendering outside the transaction, as issuing does, would avoid holding a connection over a render at all, at the
 * price of a second state for credit notes.
 */
export async function creditInvoice(
  sql: Queryable,
  deps: IssueDeps,
  organizationId: string,
  invoiceId: string,
  reason: string,
): Promise<Invoice> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`credit-notes:${organizationId}`}, 0))`;
  const original = await findInvoiceRow(sql, organizationId, invoiceId, { lock: true });
  if (!original) throw notFound('invoice_not_found', 'invoice');
  if (original.type === 'creditNote') throw notCreditable('A credit note cannot be credited.');
  if (!isIssued(original.status)) throw notCreditable('Only an issued invoice can be credited.');
  if (original.status === INVOICE_STATUS.collections) throw notCreditable('An invoice handed over to debt collection cannot be credited.');
  if (original.credited_oere > 0) throw notCreditable('This invoice has already been credited.');
  const [existing] = await sql`SELECT 1 FROM invoices WHERE organization_id = ${organizationId} AND credits_invoice_id = ${invoiceId}`;
  if (existing) throw notCreditable('This invoice has already been credited.');

  const issueDate = await deps.clock.today(organizationId);
  // A credit note clears the principal: the interest accrued up to its date is posted first (when the organisation
  // charges it) and stays on the invoice like its fees.
  await postInterestOnSettlement(sql, organizationId, original, issueDate, original.gross_oere);
  const seller = await loadSeller(sql, organizationId);
  // As for an issue: checked before the number is taken.
  assertSellerDetailsComplete(seller);
  const buyer = await loadBuyer(sql, deps.keyring, organizationId, original.customer_id);
  const lines = (await loadLines(sql, [invoiceId])).get(invoiceId) ?? [];
  const number = await takeNextNumber(sql, organizationId);
  const view = documentView('creditNote', number, issueDate, null, seller, buyer, original, lines, {
    number: original.number!,
    issueDate: original.issue_date!,
    reason,
  });
  const logo = await currentDocumentLogo(sql, organizationId);
  const pdf = await deps.pdf.render(view.kind, { ...view, logo: logo?.logo ?? null });
  const doc = await deps.documents.put(sql, { organizationId, contentType: 'application/pdf', bytes: pdf });
  const id = uuidv7();
  // The database clock, like every other timestamp of the invoice.
  const [clock] = await sql<{ now: Date }[]>`SELECT now()`;
  const issuedAt = clock!.now;
  await sql`
    INSERT INTO invoices ${sql({
      id,
      organization_id: organizationId,
      type: 'creditNote',
      status: INVOICE_STATUS.issued,
      number,
      customer_id: original.customer_id,
      issue_date: issueDate,
      due_date: null,
      payment_terms_days: null,
      net_oere: original.net_oere,
      vat_oere: original.vat_oere,
      gross_oere: original.gross_oere,
      customer_reference: original.customer_reference,
      sender_reference: original.sender_reference,
      buyer_reference: original.buyer_reference,
      order_reference: original.order_reference,
      // The document prints the original's heading and message (documentView above); the record says what it prints.
      message: original.message,
      heading: original.heading,
      external_reference: original.external_reference,
      metadata: null,
      credits_invoice_id: invoiceId,
      credit_reason: reason,
      seller_snapshot: view.seller,
      buyer_snapshot: view.buyer,
      document_sha256: doc.sha256,
      issued_at: issuedAt,
      logo_sha256: logo?.sha256 ?? null,
    } as Record<string, unknown>)}`;
  await sql`
    INSERT INTO invoice_lines (organization_id, invoice_id, position, description, quantity, unit_price_oere, vat_rate_bps, vat_exemption_reason,
      discount_type, discount_value, discount_oere, account_id, unit, product_id, net_oere, vat_oere, gross_oere)
    SELECT organization_id, ${id}, position, description, quantity, unit_price_oere, vat_rate_bps, vat_exemption_reason,
      discount_type, discount_value, discount_oere, account_id, unit, product_id, net_oere, vat_oere, gross_oere
    FROM invoice_lines WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId}`;
  // The credit note's own story: made and issued in this one step, like an invoice created with ?issue=true.
  await recordTimeline(sql, organizationId, id, 'created');
  await recordTimeline(sql, organizationId, id, 'issued', { number });
  // A credit that leaves nothing to pay (its balance once credited: no fees left over) ends the invoice's overdue stretch: the dunning engine reads
  // settled_on to find where a customer's continuous arrears began, and ends the invoice's lifecycle on its next wake.
  const settles = rowBalanceOere({ ...original, credited_oere: original.gross_oere }) <= 0;
  await sql`
    UPDATE invoices SET updated_at = now()${settles ? sql`, settled_on = coalesce(settled_on, ${issueDate}::date)` : sql``}
    WHERE organization_id = ${organizationId} AND id = ${invoiceId}`;
  await recordEvent(sql, {
    organizationId,
    type: 'invoice.credited',
    entityId: invoiceId,
    data: { invoiceId, creditNoteId: id, creditNoteNumber: number, creditedOere: original.gross_oere, externalReference: original.external_reference },
  });
  await recordTimeline(sql, organizationId, invoiceId, 'credited', { creditNoteId: id, number });
  // The claim a payment plan scheduled is gone: an active plan ends, cancelled (docs/reminders.md, "Payment plans").
  const plan = await latestPaymentPlan(sql, organizationId, invoiceId);
  if (plan) await endPaymentPlan(sql, organizationId, plan, 'tryCancel', issueDate, issuedAt);
  // Crediting an overdue invoice lowers what the customer owes overdue: it may settle a customer announced past due.
  if (original.due_date !== null && original.due_date < issueDate) {
    await reconcilePastDue(sql, organizationId, issueDate, [original.customer_id]);
  }
  return getInvoiceOrThrow(sql, organizationId, id, 'creditNote');
}
