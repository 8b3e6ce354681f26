/**
 * The delivery of a collection case's own påkrav, after it is rendered and stored (services/cases/render-case-paakrav.ts):
 * by mail with the PDF attached, else as a letter through the letter service. Writes nothing: the case workflow
 * journals the answer and records the påkrav (its date, PAAKRAV_SENDT) from it.
 *
 * Who receives it: a case from an invoice, the invoice's customer (its e-mail, else its address); a case from
 * POST /v1/cases, the first debtor (in the body's order) with an e-mail, else the first debtor with a whole address
 * (street, postal code, city). Nobody reachable: `refused` with `debtor_unreachable`.
 *
 * What is retried and what is final: a transient failure (SMTP 4xx or unreachable; the letter service 5xx,
 * unreachable or slow) is thrown, for the step's retry policy; a permanent refusal (SMTP 5xx: `mail_rejected`; the
 * letter service's 4xx: `letter_rejected`) is returned as `refused`. The mail's Message-ID
 * (`case-paakrav-<caseId>@<domain>`) and the letter's id (`case-paakrav-<caseId>`) are the case's, so a retried
 * send is the same mail or letter.
 */
import type { CaseAddressJson } from '../../services/cases/case-paakrav-document.ts';
import { decryptAddress, loadCasePaakravView, readCaseDebtors, readCaseRow, readInvoiceClaim } from '../../services/cases/case-paakrav-document.ts';
import type { DocumentStore } from '../../services/documents/document-store.ts';
import { loadBuyer } from '../../services/invoices/document-parties.ts';
import type { LetterAddress, LetterService } from '../../services/letters/letter-port.ts';
import { MailDeliveryError, type Mailer } from '../../services/mail/mail-port.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import type { Db } from '../../services/shared/db.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { isUuid } from '../../services/shared/ids.ts';
import { composeCasePaakravMail } from '../mail/case-paakrav-mail.ts';

export interface CasePaakravDeliveryDeps {
  db: Db;
  keyring: Keyring;
  documents: DocumentStore;
  mailer: Mailer;
  letters: LetterService;
  /** The service's own sending address (MAIL_FROM_ADDRESS). */
  fromAddress: string;
}

export type CasePaakravDelivery =
  | { kind: 'sent'; channel: 'email' | 'letter'; reference: string }
  | { kind: 'refused'; code: string; reason: string };

type Recipient =
  | { channel: 'email'; name: string; email: string }
  | { channel: 'letter'; address: LetterAddress & { country: string } }
  | { channel: 'none' };

/** The letter id (and the Message-ID's left part) of a case's påkrav. */
export const casePaakravLetterId = (caseId: string): string => `case-paakrav-${caseId}`;

const wholeAddress = (name: string, a: { street: string | null; postalCode: string | null; city: string | null; country: string | null }): Recipient =>
  a.street && a.postalCode && a.city
    ? { channel: 'letter', address: { name, street: a.street, postalCode: a.postalCode, city: a.city, country: a.country ?? 'DK' } }
    : { channel: 'none' };

const fromCaseAddress = (a: CaseAddressJson | null) => ({ street: a?.gade ?? null, postalCode: a?.postnummer ?? null, city: a?.by ?? null, country: a?.land ?? null });

export async function deliverCasePaakrav(
  deps: CasePaakravDeliveryDeps,
  organizationId: string,
  caseId: string,
  documentSha256: string,
): Promise<CasePaakravDelivery> {
  if (!isUuid(organizationId) || !isUuid(caseId)) throw new Error('deliverCasePaakrav needs an organisation id and a case id');
  if (!/^[0-9a-f]{64}$/.test(documentSha256)) throw new Error('deliverCasePaakrav needs the document SHA-256 as 64 hex digits');
  const { view, pdf, recipient } = await deps.db.read(async (sql) => {
    const c = await readCaseRow(sql, organizationId, caseId);
    if (!c) throw new Error(`organisation ${organizationId} has no case ${caseId}`);
    // The mail does not print the date; the view only needs one.
    const [d] = await sql<{ on: string }[]>`SELECT business_today(${organizationId})::text AS on`;
    const v = await loadCasePaakravView(sql, deps.keyring, organizationId, caseId, d!.on);
    if (!v) throw new Error(`case ${caseId} has no påkrav view (its invoice is not an issued invoice)`);
    const doc = await deps.documents.get(sql, organizationId, Buffer.from(documentSha256, 'hex'));
    if (!doc) throw new Error(`the påkrav document of case ${caseId} is missing from the document store`);

    let to: Recipient = { channel: 'none' };
    if (c.invoice_id) {
      const inv = await readInvoiceClaim(sql, organizationId, c.invoice_id);
      const buyer = await loadBuyer(sql, deps.keyring, organizationId, inv!.customerId);
      to = buyer.email ? { channel: 'email', name: buyer.contactPerson ?? buyer.name, email: buyer.email } : wholeAddress(buyer.name, buyer);
    } else {
      const debtors = await readCaseDebtors(sql, organizationId, caseId);
      const withEmail = debtors.find((x) => x.email_enc !== null);
      if (withEmail) {
        to = { channel: 'email', name: deps.keyring.decrypt(withEmail.name_enc), email: deps.keyring.decrypt(withEmail.email_enc!) };
      } else {
        for (const x of debtors) {
          to = wholeAddress(deps.keyring.decrypt(x.name_enc), fromCaseAddress(decryptAddress(deps.keyring, x.address_enc)));
          if (to.channel === 'letter') break;
        }
      }
    }
    return { view: v, pdf: doc.bytes, recipient: to };
  });

  if (recipient.channel === 'email') {
    const mail = composeCasePaakravMail({ view, fromAddress: deps.fromAddress, to: recipient.email, recipientName: recipient.name, pdf });
    try {
      const receipt = await deps.mailer.send(mail);
      return { kind: 'sent', channel: 'email', reference: receipt.messageId };
    } catch (err) {
      if (err instanceof MailDeliveryError && err.permanent) return { kind: 'refused', code: 'mail_rejected', reason: err.message.slice(0, 1000) };
      throw err;
    }
  }

  if (recipient.channel === 'letter') {
    const creditor = view.creditor;
    try {
      const sent = await deps.letters.send({
        id: casePaakravLetterId(caseId),
        organizationId,
        documentSha256,
        pdf,
        recipient: recipient.address,
        sender: { name: creditor.name, street: creditor.street ?? '', postalCode: creditor.postalCode ?? '', city: creditor.city ?? '' },
      });
      return { kind: 'sent', channel: 'letter', reference: sent.reference };
    } catch (err) {
      if (err instanceof DomainError && err.code === 'letter_rejected') return { kind: 'refused', code: 'letter_rejected', reason: err.message.slice(0, 1000) };
      throw err;
    }
  }

  return {
    kind: 'refused',
    code: 'debtor_unreachable',
    reason: view.invoiceNumber !== null ? 'the customer has neither an e-mail address nor a street, postal code and city' : 'no debtor has an e-mail address or a street, postal code and city',
  };
}
