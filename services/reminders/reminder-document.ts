import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { isUuid } from '../shared/ids.ts';
import type { InvoiceDocumentView } from '../invoices/invoice-document.ts';
import { loadBuyer } from '../invoices/document-parties.ts';
import { principalOutstandingOere } from '../invoices/invoice-balance.ts';
import { findInvoiceRow } from '../invoices/invoice-queries.ts';
import { loadDocumentLogo, type DocumentLogo } from '../branding/document-logo.ts';
import { findVerifiedPaymentDomain, formatPaymentCode, paymentLinkUrl } from '../payments/payment-links.ts';
import { fikOf, type Fik } from '../payments/fik-payment-id.ts';

/**
 * What a reminder document shows (a "rykker", or the free payment reminder; the last reminder of a plan is also the
 * demand letter, påkrav: Inkassoloven § 10): the parties as printed on the invoice, the invoice it reminds of, what is
 * owed as of the reminder, the new deadline and how to pay. Amounts are øre; formatting is the template's job.
 */
export interface ReminderDocumentView {
  kind: 'reminder';
  /** The customer's language when the document is made, as for the invoice's mail. */
  language: 'da' | 'en';
  reminderId: string;
  type: 'payment_reminder' | 'reminder';
  /** 1..3; null for the payment reminder. */
  reminderNumber: number | null;
  /** The påkrav (Inkassoloven § 10): warns of debt collection and its costs. */
  demandLetter: boolean;
  /** The business date the reminder was taken on: the document's date. */
  sentOn: string;
  /** The new payment deadline (sent date + 10 days). */
  deadline: string;
  /** As frozen on the invoice, so the reminder names the parties exactly as the invoice does. */
  seller: InvoiceDocumentView['seller'];
  buyer: InvoiceDocumentView['buyer'];
  invoice: { number: number; issueDate: string; dueDate: string; grossOere: number };
  /** The invoice's balance without fees: gross − paid − credited, never below 0. */
  principalOere: number;
  /** Reminder fees charged on the invoice before this reminder. */
  feesBeforeOere: number;
  /** This reminder's fee (0 when it carries none). */
  feeOere: number;
  /** Late-payment interest and the compensation charged before this reminder (docs/reminders.md, "Interest"). */
  interestBeforeOere: number;
  compensationBeforeOere: number;
  /** The interest this reminder's step posted: one piece per half-year, with its days and rate. */
  interest: { fromDate: string; toDate: string; rateBp: number; amountOere: number }[];
  /** The 310 kr compensation this reminder charged (0 when it charged none). */
  compensationOere: number;
  /** Payments beyond the principal, which went to the fees (rare: the engine reminds only of a positive balance). */
  paidTowardsFeesOere: number;
  /** principal + fees, interest and compensation before + this step's − paid towards them. */
  totalOere: number;
  /** The invoice's payment link, when it has one: its code, and its URL when the pay page's address is known. */
  paymentLink: { url: string | null; paymentCode: string } | null;
  /** The FI-kort +71 payment id the invoice was issued with, repeated as the invoice prints it; absent or null: none. */
  fik?: Fik | null;
  /** The organisation's light logo when the reminder was taken; absent or null: none. */
  logo?: DocumentLogo | null;
}

/**
 * The document view of a reminder, read from what is stored; undefined when the organisation has no such reminder
 * (or its invoice is not an issued invoice). Reads only: a payment link that does not exist yet is not created here.
 *
 * "As of the reminder": the principal from the payments and credits booked until now (the document is made right
 * after the step is taken), the fees before it from the invoice's fees up to this reminder, excluding its own (the
 * reminder's row and its fee are written in one transaction, so they share one created_at).
 */
export async function loadReminderView(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  reminderId: string,
  opts: { payBaseUrl?: string | undefined } = {},
): Promise<ReminderDocumentView | undefined> {
  if (!isUuid(reminderId) || !isUuid(organizationId)) return undefined;
  const [r] = await sql<{
    invoice_id: string; customer_id: string; type: 'payment_reminder' | 'reminder'; reminder_number: number | null;
    fee_oere: number; demand_letter: boolean; sent_on: string; deadline: string; logo_sha256: string | null; compensation_oere: number;
  }[]>`
    SELECT invoice_id, customer_id, type, reminder_number, fee_oere, demand_letter, sent_on, deadline, logo_sha256, compensation_oere
    FROM reminders WHERE organization_id = ${organizationId} AND id = ${reminderId}`;
  if (!r) return undefined;
  const invoice = await findInvoiceRow(sql, organizationId, r.invoice_id, { type: 'invoice' });
  if (!invoice || invoice.number === null || invoice.issue_date === null || invoice.due_date === null) return undefined;
  const [snap] = await sql<{ seller_snapshot: InvoiceDocumentView['seller'] | null; buyer_snapshot: InvoiceDocumentView['buyer'] | null }[]>`
    SELECT seller_snapshot, buyer_snapshot FROM invoices WHERE organization_id = ${organizationId} AND id = ${r.invoice_id}`;
  if (!snap?.seller_snapshot || !snap.buyer_snapshot) return undefined;
  // Each kind of claim item charged before this reminder (its own are in the same transaction, so share its
  // created_at, and are told apart by the fee's id and the items' reminder_id).
  const [fees] = await sql<{ before: number; interest_before: number; compensation_before: number }[]>`
    SELECT coalesce(sum(f.amount_oere) FILTER (WHERE f.kind = 'reminder'), 0)::bigint AS before,
           coalesce(sum(f.amount_oere) FILTER (WHERE f.kind = 'interest'), 0)::bigint AS interest_before,
           coalesce(sum(f.amount_oere) FILTER (WHERE f.kind = 'compensation'), 0)::bigint AS compensation_before
    FROM reminders r JOIN invoice_fees f ON f.organization_id = r.organization_id AND f.invoice_id = r.invoice_id
    WHERE r.organization_id = ${organizationId} AND r.id = ${reminderId}
      AND f.created_at <= r.created_at AND f.id IS DISTINCT FROM r.fee_id AND f.reminder_id IS DISTINCT FROM r.id`;
  const interest = await sql<{ fromDate: string; toDate: string; rateBp: number; amountOere: number }[]>`
    SELECT interest_from::text AS "fromDate", interest_to::text AS "toDate", rate_bp AS "rateBp", amount_oere AS "amountOere"
    FROM invoice_fees WHERE organization_id = ${organizationId} AND reminder_id = ${reminderId} AND kind = 'interest'
    ORDER BY interest_from`;
  const [link] = await sql<{ reference: string; payment_code: string }[]>`
    SELECT reference, payment_code FROM payment_links WHERE organization_id = ${organizationId} AND invoice_id = ${r.invoice_id}`;
  // The link as GET …/payment-link shows it: on the verified payment domain when there is one.
  const paymentDomain = link ? await findVerifiedPaymentDomain(sql, organizationId) : null;
  // The customer's language now, as the invoice's mail and PDF pick it.
  const { language } = await loadBuyer(sql, keyring, organizationId, r.customer_id);

  const feesBeforeOere = Number(fees!.before);
  const interestBeforeOere = Number(fees!.interest_before);
  const compensationBeforeOere = Number(fees!.compensation_before);
  const interestOere = interest.reduce((sum, p) => sum + Number(p.amountOere), 0);
  const compensationOere = Number(r.compensation_oere);
  const claimsOere = feesBeforeOere + r.fee_oere + interestBeforeOere + compensationBeforeOere + interestOere + compensationOere;
  const settledOere = invoice.paid_oere + invoice.credited_oere;
  const principalOere = principalOutstandingOere({ grossOere: invoice.gross_oere, paidOere: invoice.paid_oere, creditedOere: invoice.credited_oere });
  const paidTowardsFeesOere = Math.min(claimsOere, Math.max(0, settledOere - invoice.gross_oere));
  const base = opts.payBaseUrl?.replace(/\/+$/, '');
  return {
    kind: 'reminder',
    language,
    reminderId,
    type: r.type,
    reminderNumber: r.reminder_number,
    demandLetter: r.demand_letter,
    sentOn: r.sent_on,
    deadline: r.deadline,
    seller: snap.seller_snapshot,
    buyer: snap.buyer_snapshot,
    invoice: { number: invoice.number, issueDate: invoice.issue_date, dueDate: invoice.due_date, grossOere: invoice.gross_oere },
    principalOere,
    feesBeforeOere,
    feeOere: r.fee_oere,
    interestBeforeOere,
    compensationBeforeOere,
    interest: interest.map((p) => ({ ...p, amountOere: Number(p.amountOere) })),
    compensationOere,
    paidTowardsFeesOere,
    totalOere: principalOere + claimsOere - paidTowardsFeesOere,
    logo: await loadDocumentLogo(sql, organizationId, r.logo_sha256),
    fik: fikOf(invoice),
    paymentLink: link
      ? {
        url: paymentDomain || base ? paymentLinkUrl(link.reference, base ?? '', paymentDomain) : null,
        paymentCode: formatPaymentCode(link.payment_code),
      }
      : null,
  };
}
