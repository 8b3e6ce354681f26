import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { paakravDeadline } from '../law/danish-law.ts';
import { isUuid } from '../shared/ids.ts';
import type { InvoiceDocumentView } from '../invoices/invoice-document.ts';
import { loadBuyer, loadSeller, printedSeller } from '../invoices/document-parties.ts';
import { findInvoiceRow } from '../invoices/invoice-queries.ts';

/**
 * What a case's own demand letter (påkrav, Inkassoloven § 10; docs/collections.md, "The case's påkrav") shows, when the
 * case has none from an invoice's reminders (a case from POST /v1/cases, or an invoice that had no reminders): the
 * creditor (name, address, CVR, bank details), the debtors (name and address, never CPR, e-mail or phone), each claim,
 * the fees and what was paid, the total, the deadline (påkrav date + 10 days) and the warning of debt collection and
 * its costs. Amounts are øre; formatting is the template's job (activities/pdf/case-paakrav-template.ts).
 */
export interface CasePaakravView {
  kind: 'casePaakrav';
  /** An invoice's case: its customer's language now; a case from POST /v1/cases: Danish. */
  language: 'da' | 'en';
  caseId: string;
  caseNumber: number;
  /** The caller's reference of a case from POST /v1/cases (or the invoice's case's, when it has one). */
  externalReference: string | null;
  /** The invoice of a case from POST /v1/invoices/{id}/collect. */
  invoiceNumber: number | null;
  /** The påkrav date: the document's date. */
  sentOn: string;
  /** sentOn + 10 days: pay by then, or the claim goes to debt collection (the hand-over comes the day after). */
  deadline: string;
  /** The organisation as it is now, with its bank details. */
  creditor: InvoiceDocumentView['seller'];
  debtors: CasePaakravDebtor[];
  claims: CasePaakravClaim[];
  /** Reminder fees charged on the invoice (0 for a case from POST /v1/cases). */
  feesOere: number;
  /** Paid and credited so far (0 for a case from POST /v1/cases). */
  paidOere: number;
  /** Σ principal + fees − paid, never below 0. */
  totalOere: number;
  /** What the payment is to be marked with: the invoice number, else the case's external reference, else its number. */
  paymentReference: string;
}

export interface CasePaakravDebtor {
  name: string;
  /** A company's CVR (public register data); null for a person. */
  cvr: string | null;
  street: string | null;
  postalCode: string | null;
  city: string | null;
  country: string | null;
}

export interface CasePaakravClaim {
  principalOere: number;
  dueDate: string;
  invoiceDate: string | null;
  description: string | null;
}

/** The case's debtor address as POST /v1/cases takes it (stored encrypted as its JSON). */
export interface CaseAddressJson {
  gade?: string;
  postnummer?: string;
  by?: string;
  land?: string;
  darId?: string;
  kommunekode?: string;
}

export interface CaseRow {
  id: string;
  case_number: number;
  external_reference: string | null;
  invoice_id: string | null;
}

export const readCaseRow = async (sql: Queryable, organizationId: string, caseId: string): Promise<CaseRow | undefined> =>
  (await sql<CaseRow[]>`
    SELECT id, case_number, external_reference, invoice_id FROM collection_cases
    WHERE organization_id = ${organizationId} AND id = ${caseId}`)[0];

export interface CaseDebtorRow {
  position: number;
  debtor_type: 'person' | 'virksomhed';
  name_enc: Buffer;
  cvr: string | null;
  cpr_enc: Buffer | null;
  address_enc: Buffer | null;
  email_enc: Buffer | null;
  phone_enc: Buffer | null;
}

export const readCaseDebtors = (sql: Queryable, organizationId: string, caseId: string): Promise<CaseDebtorRow[]> =>
  sql<CaseDebtorRow[]>`
    SELECT position, debtor_type, name_enc, cvr, cpr_enc, address_enc, email_enc, phone_enc FROM case_debtors
    WHERE organization_id = ${organizationId} AND case_id = ${caseId} ORDER BY position`;

export interface CaseClaimRow {
  position: number;
  principal_oere: number;
  due_date: string;
  invoice_date: string | null;
  description_enc: Buffer | null;
}

export const readCaseClaims = (sql: Queryable, organizationId: string, caseId: string): Promise<CaseClaimRow[]> =>
  sql<CaseClaimRow[]>`
    SELECT position, principal_oere, due_date::text AS due_date, invoice_date::text AS invoice_date, description_enc FROM case_claims
    WHERE organization_id = ${organizationId} AND case_id = ${caseId} ORDER BY position`;

export const decryptAddress = (keyring: Keyring, blob: Buffer | null): CaseAddressJson | null =>
  blob ? (JSON.parse(keyring.decrypt(blob)) as CaseAddressJson) : null;

/** An invoice's one claim: the invoice's gross amount, its dates, its fees and what was paid and credited. */
export interface InvoiceClaim {
  number: number;
  customerId: string;
  grossOere: number;
  issueDate: string;
  dueDate: string;
  /** Every claim item charged on the invoice: reminder fees, posted interest, compensation. */
  feesOere: number;
  /** Of those, the posted late-payment interest and the 310 kr compensation (docs/reminders.md). */
  interestOere: number;
  compensationOere: number;
  /** The statutory rate of the interest posted last (null when none was posted). */
  interestRateBp: number | null;
  paidOere: number;
}

export async function readInvoiceClaim(sql: Queryable, organizationId: string, invoiceId: string): Promise<InvoiceClaim | undefined> {
  const invoice = await findInvoiceRow(sql, organizationId, invoiceId, { type: 'invoice' });
  if (!invoice || invoice.number === null || invoice.issue_date === null || invoice.due_date === null) return undefined;
  return {
    number: invoice.number,
    customerId: invoice.customer_id,
    grossOere: invoice.gross_oere,
    issueDate: invoice.issue_date,
    dueDate: invoice.due_date,
    feesOere: invoice.fees_oere,
    interestOere: invoice.interest_oere,
    compensationOere: invoice.compensation_oere,
    interestRateBp: invoice.interest_oere > 0 ? await lastInterestRate(sql, organizationId, invoiceId) : null,
    paidOere: invoice.paid_oere + invoice.credited_oere,
  };
}

async function lastInterestRate(sql: Queryable, organizationId: string, invoiceId: string): Promise<number | null> {
  const [row] = await sql<{ rate_bp: number }[]>`
    SELECT rate_bp FROM invoice_fees WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND kind = 'interest'
    ORDER BY interest_to DESC LIMIT 1`;
  return row?.rate_bp ?? null;
}

/** The description an invoice's claim carries. */
export const invoiceClaimDescription = (language: 'da' | 'en', number: number): string =>
  language === 'da' ? `Faktura nr. ${number}` : `Invoice no. ${number}`;

/**
 * The view of a case's påkrav sent on `sentOn`; undefined when the organisation has no such case (or its invoice is
 * not an issued invoice). Reads only. The claims' descriptions and the debtors' names and addresses are decrypted
 * into the view (they are printed); CPR, e-mail and phone are not read.
 */
export async function loadCasePaakravView(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  caseId: string,
  sentOn: string,
): Promise<CasePaakravView | undefined> {
  if (!isUuid(organizationId) || !isUuid(caseId)) return undefined;
  const c = await readCaseRow(sql, organizationId, caseId);
  if (!c) return undefined;
  const creditor = printedSeller(await loadSeller(sql, organizationId));
  const base = { kind: 'casePaakrav' as const, caseId, caseNumber: c.case_number, externalReference: c.external_reference, sentOn, deadline: paakravDeadline(sentOn), creditor };

  if (c.invoice_id) {
    const inv = await readInvoiceClaim(sql, organizationId, c.invoice_id);
    if (!inv) return undefined;
    const buyer = await loadBuyer(sql, keyring, organizationId, inv.customerId);
    const language = buyer.language;
    return {
      ...base,
      language,
      invoiceNumber: inv.number,
      debtors: [{ name: buyer.name, cvr: buyer.cvr, street: buyer.street, postalCode: buyer.postalCode, city: buyer.city, country: buyer.country }],
      claims: [{ principalOere: inv.grossOere, dueDate: inv.dueDate, invoiceDate: inv.issueDate, description: invoiceClaimDescription(language, inv.number) }],
      feesOere: inv.feesOere,
      paidOere: inv.paidOere,
      totalOere: Math.max(0, inv.grossOere + inv.feesOere - inv.paidOere),
      paymentReference: String(inv.number),
    };
  }

  const [claims, debtors] = await Promise.all([readCaseClaims(sql, organizationId, caseId), readCaseDebtors(sql, organizationId, caseId)]);
  const principal = claims.reduce((sum, cl) => sum + cl.principal_oere, 0);
  return {
    ...base,
    language: 'da',
    invoiceNumber: null,
    debtors: debtors.map((d) => {
      const a = decryptAddress(keyring, d.address_enc);
      return { name: keyring.decrypt(d.name_enc), cvr: d.cvr, street: a?.gade ?? null, postalCode: a?.postnummer ?? null, city: a?.by ?? null, country: a?.land ?? null };
    }),
    claims: claims.map((cl) => ({
      principalOere: cl.principal_oere,
      dueDate: cl.due_date,
      invoiceDate: cl.invoice_date,
      description: cl.description_enc ? keyring.decrypt(cl.description_enc) : null,
    })),
    feesOere: 0,
    paidOere: 0,
    totalOere: principal,
    paymentReference: c.external_reference ?? String(c.case_number),
  };
}
