import type { Address } from '../../contracts/customers.ts';
import {
  decryptAddress,
  invoiceClaimDescription,
  readCaseClaims,
  readCaseDebtors,
  readCaseRow,
  readInvoiceClaim,
} from '../cases/case-paakrav-document.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { isUuid } from '../shared/ids.ts';
import type { HandOverClaim, HandOverDebtor, HandOverDocument } from './partner-port.ts';

/** The stable id of a case's hand-over: a repeat with it is the same hand-over (partner-port.ts). */
export const handOverIdOf = (organizationId: string, caseId: string): string => `${organizationId}:${caseId}`;

/**
 * The document a case is handed over with (partner-port.ts), read from what is stored; undefined when the organisation
 * has no such case (or the invoice of an invoice's case is not an issued invoice). Reads only.
 *
 * - A case from POST /v1/cases: its claims and debtors in the order given, with the debtors' name, address, e-mail,
 *   phone and CPR decrypted. Fees and payments are 0 (the API takes none for such a case).
 * - A case from an invoice (`invoice_id` set, no claim or debtor rows): one claim, the invoice (principal = gross,
 *   its reminder fees, paid + credited, its dates and number), and one debtor, the invoice's customer as it is now
 *   (e-mail and phone decrypted as services/customers does, CPR from `cpr_enc` when the customer has one).
 *
 * This is the one place the CPR number is decrypted, and the document goes only to the collection partner: it is
 * never logged, evented or journaled elsewhere. A case without a påkrav date cannot be handed over (the deadline the
 * hand-over waits for is not set): that is an Error, not undefined. `handedOverOn` is part of the document, so the
 * caller passes the date it journaled, and a retried hand-over carries the same document.
 */
export async function loadHandOverDocument(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  caseId: string,
  handedOverOn: string,
): Promise<HandOverDocument | undefined> {
  if (!isUuid(organizationId) || !isUuid(caseId)) return undefined;
  const c = await readCaseRow(sql, organizationId, caseId);
  if (!c) return undefined;
  const [dates] = await sql<{ sent_on: string | null; frist: string | null }[]>`
    SELECT paakrav_sent_on::text AS sent_on, paakrav_frist::text AS frist FROM collection_cases
    WHERE organization_id = ${organizationId} AND id = ${caseId}`;
  if (!dates?.sent_on || !dates.frist) throw new Error(`case ${caseId} has no påkrav date: it cannot be handed over`);
  const [org] = await sql<{ name: string; cvr: string | null }[]>`SELECT name, cvr FROM organizations WHERE id = ${organizationId}`;

  const dec = (blob: Buffer | null): string | null => (blob ? keyring.decrypt(blob) : null);
  let claims: HandOverClaim[];
  let debtors: HandOverDebtor[];
  let invoiceNumber: number | null = null;

  if (c.invoice_id) {
    const inv = await readInvoiceClaim(sql, organizationId, c.invoice_id);
    if (!inv) return undefined;
    invoiceNumber = inv.number;
    const [cu] = await sql<{
      type: 'person' | 'company'; name: string; cvr: string | null; address: Address | null; language: 'da' | 'en' | null;
      email_enc: Buffer | null; phone_enc: Buffer | null; cpr_enc: Buffer | null;
    }[]>`
      SELECT type, name, cvr, address, language, email_enc, phone_enc, cpr_enc FROM customers
      WHERE organization_id = ${organizationId} AND id = ${inv.customerId}`;
    if (!cu) throw new Error(`the customer of case ${caseId}'s invoice is missing`);
    claims = [{
      principalOere: inv.grossOere,
      dueDate: inv.dueDate,
      invoiceDate: inv.issueDate,
      description: invoiceClaimDescription(cu.language ?? 'da', inv.number),
      feesOere: inv.feesOere - inv.interestOere - inv.compensationOere,
      interestOere: inv.interestOere,
      interestRateBp: inv.interestRateBp,
      compensationOere: inv.compensationOere,
      paidOere: inv.paidOere,
    }];
    const a = cu.address;
    const address = a && (a.street || a.postalCode || a.city || a.country)
      ? { ...(a.street ? { gade: a.street } : {}), ...(a.postalCode ? { postnummer: a.postalCode } : {}), ...(a.city ? { by: a.city } : {}), ...(a.country ? { land: a.country } : {}) }
      : null;
    debtors = [{
      type: cu.type === 'company' ? 'virksomhed' : 'person',
      name: cu.name,
      cvr: cu.cvr,
      cpr: dec(cu.cpr_enc),
      address,
      email: dec(cu.email_enc),
      phone: dec(cu.phone_enc),
    }];
  } else {
    const [claimRows, debtorRows] = await Promise.all([readCaseClaims(sql, organizationId, caseId), readCaseDebtors(sql, organizationId, caseId)]);
    claims = claimRows.map((cl) => ({
      principalOere: cl.principal_oere,
      dueDate: cl.due_date,
      invoiceDate: cl.invoice_date,
      description: dec(cl.description_enc),
      feesOere: 0,
      interestOere: 0,
      interestRateBp: null,
      compensationOere: 0,
      paidOere: 0,
    }));
    debtors = debtorRows.map((d) => ({
      type: d.debtor_type,
      name: keyring.decrypt(d.name_enc),
      cvr: d.cvr,
      cpr: dec(d.cpr_enc),
      address: decryptAddress(keyring, d.address_enc),
      email: dec(d.email_enc),
      phone: dec(d.phone_enc),
    }));
  }

  return {
    handOverId: handOverIdOf(organizationId, caseId),
    organization: { id: organizationId, name: org!.name, cvr: org!.cvr },
    case: { id: caseId, caseNumber: c.case_number, externalReference: c.external_reference, invoiceId: c.invoice_id, invoiceNumber },
    paakrav: { sentOn: dates.sent_on, deadline: dates.frist },
    handedOverOn,
    claims,
    debtors,
    outstandingOere: claims.reduce((sum, cl) => sum + Math.max(0, cl.principalOere + cl.feesOere + cl.interestOere + cl.compensationOere - cl.paidOere), 0),
  };
}
