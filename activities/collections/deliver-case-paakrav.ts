/**
 * The delivery of a collection case's own påkrav, after it is rendered and stored (services/cases/render-case-paakrav.ts):
 * by mail with the PDF attached, else as a letter through the letter service. Writes nothing: the case workflow
 * journals the answer and records the påkrav (its date, PAAKRAV_SENDT) from it.
 *
 * Who receives it: a case from an invoice, the invoice's customer (its e-mail, else its address); a case from
 * POST /v1/cases, the first debtor (in the body's order) with an e-mail, else the first debtor with a whole address
 * (street, postal code, city). Nobody reachable: `refused` with `debtor_unreachable`.
 *
 * What is retried and what is final is the channels' (services/dispatch/channels.ts). The mail's Message-ID
 * (`case-paakrav-<caseId>@<domain>`) and the letter's id (`case-paakrav-<caseId>`) are the case's, so a retried
 * send is the same mail or letter.
 */
import { loadCasePaakravView, readCaseDebtors, type CasePaakravView, readCaseRow, readInvoiceClaim } from '../../services/cases/case-paakrav-document.ts';
import { loadBuyer } from '../../services/invoices/document-parties.ts';
import { isUuid } from '../../services/shared/ids.ts';
import { documentLetter, postalRecipient, refused, sentReference, type DeliveryDeps, type Recipient, type Refused } from '../../services/dispatch/channels.ts';
import { deliverDocument, type DocumentKind } from '../../services/dispatch/deliver-document.ts';
import type { DeliveryRecord } from '../../services/dispatch/record-delivery.ts';
import { recordCasePaakrav } from '../../services/cases/take-due-case-step.ts';
import { storedDocument } from '../../services/dispatch/stored-document.ts';
import { composeCasePaakravMail } from '../mail/case-paakrav-mail.ts';

export type CasePaakravDeliveryDeps = DeliveryDeps;

export type CasePaakravDelivery = { kind: 'sent'; channel: 'email' | 'letter'; reference: string } | Refused;

/** The letter id (and the Message-ID's left part) of a case's påkrav. */
export const casePaakravLetterId = (caseId: string): string => `case-paakrav-${caseId}`;

type CasePaakravId = { organizationId: string; caseId: string; documentSha256: string };
type ReadyPaakrav = { view: CasePaakravView; pdf: Buffer; recipient: Recipient | null };

/** The case's own påkrav as a kind of outbound document: by e-mail where it can, else by letter. */
export const CASE_PAAKRAV_DOCUMENT: DocumentKind<CasePaakravDeliveryDeps, ReadyPaakrav, CasePaakravDelivery, CasePaakravId> = {
  prepare: (deps, { organizationId, caseId, documentSha256 }) => {
    if (!isUuid(organizationId) || !isUuid(caseId)) throw new Error('deliverCasePaakrav needs an organisation id and a case id');
    if (!/^[0-9a-f]{64}$/.test(documentSha256)) throw new Error('deliverCasePaakrav needs the document SHA-256 as 64 hex digits');
    return deps.db.read(async (sql) => {
      const c = await readCaseRow(sql, organizationId, caseId);
      if (!c) throw new Error(`organisation ${organizationId} has no case ${caseId}`);
      // The mail does not print the date; the view only needs one.
      const [d] = await sql<{ on: string }[]>`SELECT business_today(${organizationId})::text AS on`;
      const view = await loadCasePaakravView(sql, deps.keyring, organizationId, caseId, d!.on);
      if (!view) throw new Error(`case ${caseId} has no påkrav view (its invoice is not an issued invoice)`);
      const pdf = await storedDocument(sql, deps.documents, organizationId, Buffer.from(documentSha256, 'hex'), `the påkrav of case ${caseId}`);
      // By e-mail where there is an address for it, else by letter to the first debtor (as printed) with a whole address.
      let email: Recipient | undefined;
      if (c.invoice_id) {
        const inv = await readInvoiceClaim(sql, organizationId, c.invoice_id);
        const buyer = await loadBuyer(sql, deps.keyring, organizationId, inv!.customerId);
        if (buyer.email) email = { channel: 'email', name: buyer.contactPerson ?? buyer.name, email: buyer.email };
      } else {
        const withEmail = (await readCaseDebtors(sql, organizationId, caseId)).find((x) => x.email_enc !== null);
        if (withEmail) email = { channel: 'email', name: deps.keyring.decrypt(withEmail.name_enc), email: deps.keyring.decrypt(withEmail.email_enc!) };
      }
      const recipient = email ?? view.debtors.map((x) => postalRecipient(x.name, x)).find((r) => r !== null) ?? null;
      return { ready: { view, pdf, recipient } };
    });
  },
  recipient: ({ view, recipient }) =>
    recipient ??
    refused(
      'debtor_unreachable',
      view.invoiceNumber !== null ? 'the customer has neither an e-mail address nor a street, postal code and city' : 'no debtor has an e-mail address or a street, postal code and city',
    ),
  outbound: ({ view, pdf }, deps, { organizationId, caseId, documentSha256 }) => ({
    mail: (to) => composeCasePaakravMail({ view, fromAddress: deps.fromAddress, to: to.email, recipientName: to.name, pdf }),
    letter: documentLetter({ id: casePaakravLetterId(caseId), organizationId, documentSha256, pdf }, view.creditor),
  }),
  answer: (sent) => {
    if (sent.kind !== 'sent') return sent;
    // A påkrav has no e-invoice: its recipient is always an e-mail address or a postal one.
    if (sent.channel === 'einvoice') throw new Error('a påkrav was delivered as an e-invoice');
    return { kind: 'sent', channel: sent.channel, reference: sentReference(sent) };
  },
};

export const deliverCasePaakrav = (deps: CasePaakravDeliveryDeps, organizationId: string, caseId: string, documentSha256: string): Promise<CasePaakravDelivery> =>
  deliverDocument(CASE_PAAKRAV_DOCUMENT, deps, { organizationId, caseId, documentSha256 });

/** Which påkrav of which case was delivered: the date it carries is the one recorded. */
export type CasePaakravRef = { organizationId: string; caseId: string; sentOn: string };

/**
 * How the case's påkrav records its delivery (`recordDelivery('paakrav', …)`): the case becomes PAAKRAV_SENDT from
 * the påkrav's date (what the channel answered is not stored). No give-up: a påkrav that cannot go out parks the case.
 */
export const CASE_PAAKRAV_RECORD: DeliveryRecord<CasePaakravRef, unknown, { recorded: boolean }> = {
  record: (db, { organizationId, caseId, sentOn }) => recordCasePaakrav(db, organizationId, caseId, sentOn),
};
