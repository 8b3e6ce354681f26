import type { DocumentStore } from '../documents/document-store.ts';
import type { PdfRenderer } from '../documents/pdf-renderer.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Db, Queryable } from '../shared/db.ts';
import { recordEvent } from '../events/record-event.ts';
import { responseJson, storeResponse } from '../idempotency/stored-response.ts';
import type { InvoiceDocumentView } from './invoice-document.ts';
import { findInvoiceRow, getInvoiceOrThrow } from './invoice-queries.ts';
import { frozenDocumentView } from './load-document-view.ts';
import { loadDocumentLogo } from '../branding/document-logo.ts';
import { INVOICE_STATUS, transitionInvoice } from './invoice-lifecycle.ts';
import { recordTimeline } from './record-timeline.ts';
import { requestInvoiceSend } from './send-invoice.ts';
import { createPaymentLinkRow } from '../payments/payment-links.ts';

export interface FinishIssueDeps {
  db: Db;
  keyring: Keyring;
  pdf: PdfRenderer;
  documents: DocumentStore;
  mailDomain: string;
  /** The pay page's address (PAY_BASE_URL): the base of the payment link the PDF prints. */
  payBaseUrl?: string | undefined;
}

/** The finished issue's response, exactly as stored under the reserving request's Idempotency-Key. */
export interface FinishedIssue {
  organizationId: string;
  invoiceId: string;
  status: number;
  body: string;
  location: string | null;
  /** A send was queued in the finishing transaction: hand it to the mail workflow after commit. */
  dispatchMail: boolean;
  /**
   * The invoice was issued with its due date already behind the business today: its dunning lifecycle (listed in the
   * wake index at issue, due the day after the due date) is due now, so the caller pokes it after commit.
   */
  dunningDue: boolean;
}

interface Reservation {
  organization_id: string;
  idempotency_key: string;
  request_hash: Buffer;
  response_status: number;
  response_location: string | null;
  send: boolean;
  language: 'da' | 'en';
}

const findReservation = async (sql: Queryable, invoiceId: string, lock: boolean) =>
  (await sql<Reservation[]>`
    SELECT organization_id, idempotency_key, request_hash, response_status, response_location, send, language
    FROM invoice_issues WHERE invoice_id = ${invoiceId} ${lock ? sql`FOR UPDATE` : sql``}`)[0];

const recordedLogo = async (sql: Queryable, organizationId: string, invoiceId: string): Promise<string | null> =>
  (await sql<{ logo_sha256: string | null }[]>`SELECT logo_sha256 FROM invoices WHERE organization_id = ${organizationId} AND id = ${invoiceId}`)[0]
    ?.logo_sha256 ?? null;

/**
 * Every issued invoice's PDF prints its payment link (docs/bank-payments.md), so the reserved invoice gets its link
 * before the PDF is rendered: in a short transaction of its own, by whichever finish comes first (a concurrent one
 * reads the same link). The pay page shows the invoice only once it is issued. False: no reservation (finished).
 */
async function makePaymentLink(sql: Queryable, invoiceId: string): Promise<boolean> {
  const reservation = await findReservation(sql, invoiceId, false);
  if (!reservation) return false;
  await createPaymentLinkRow(sql, reservation.organization_id, invoiceId);
  return true;
}

/** The reserved invoice's document, built only from what the reservation froze, with its payment link. */
async function reservedView(
  sql: Queryable,
  invoiceId: string,
  payBaseUrl: string | undefined,
): Promise<{ organizationId: string; view: InvoiceDocumentView } | undefined> {
  const reservation = await findReservation(sql, invoiceId, false);
  if (!reservation) return undefined;
  const org = reservation.organization_id;
  const row = await findInvoiceRow(sql, org, invoiceId, { type: 'invoice' });
  if (!row || row.status !== INVOICE_STATUS.issuing) return undefined;
  const view = await frozenDocumentView(sql, org, row, { language: reservation.language, email: null }, payBaseUrl);
  // The logo the reservation recorded, however long after it the PDF is rendered (docs/api-conventions.md, "Branding").
  return { organizationId: org, view: { ...view, logo: await loadDocumentLogo(sql, org, await recordedLogo(sql, org, invoiceId)) } };
}

/**
 * Steps 2 and 3 of issuing (step 1 is `reserveIssue`): renders the reserved invoice's PDF outside any transaction,
 * then in one transaction stores it write-once, marks the invoice issued, writes `invoice.issued` and the timeline,
 * queues the mail when the request asked for it, stores the reserving request's response under its Idempotency-Key
 * and removes the reservation. So the number, the frozen content, the PDF and the answer appear together.
 *
 * Safe to run more than once and from several places at a time (the request, its retry, the workflows process
 * after a crash): the reservation row is locked and removed by the one that commits; the others find it gone and
 * answer undefined, and the caller replays the stored response.
 */
export async function finishIssue(deps: FinishIssueDeps, invoiceId: string): Promise<FinishedIssue | undefined> {
  if (!(await deps.db.tx((tx) => makePaymentLink(tx, invoiceId)))) return undefined;
  const reserved = await deps.db.read((sql) => reservedView(sql, invoiceId, deps.payBaseUrl));
  if (!reserved) return undefined;
  const pdf = await deps.pdf.render(reserved.view.kind, reserved.view);
  return deps.db.tx(async (tx) => {
    const reservation = await findReservation(tx, invoiceId, true);
    if (!reservation) return undefined;
    const org = reservation.organization_id;
    const row = (await findInvoiceRow(tx, org, invoiceId, { lock: true }))!;
    const doc = await deps.documents.put(tx, { organizationId: org, contentType: 'application/pdf', bytes: pdf });
    // The locked reservation exists only while its invoice is issuing: a refusal here is a broken invariant, not a
    // client's mistake, and rolls the whole finish back.
    await transitionInvoice(tx, org, invoiceId, 'finishIssue', {
      set: tx`document_sha256 = ${doc.sha256}, issued_at = now()`,
      refused: () => new Error(`invoice ${invoiceId} has an issue reservation but is not issuing`),
    });
    await recordEvent(tx, {
      organizationId: org,
      type: 'invoice.issued',
      entityId: invoiceId,
      data: {
        invoiceId, number: row.number!, customerId: row.customer_id, issueDate: row.issue_date!, dueDate: row.due_date!,
        netOere: row.net_oere, vatOere: row.vat_oere, grossOere: row.gross_oere, externalReference: row.external_reference,
      },
    });
    await recordTimeline(tx, org, invoiceId, 'issued', { number: row.number });
    // A subscription's period invoice (POST …/run) answers its period too.
    let meta: Record<string, unknown> = row.period_start !== null ? { period: { start: row.period_start, end: row.period_end } } : {};
    let dispatchMail = false;
    if (reservation.send) {
      const requested = await requestInvoiceSend(tx, deps.keyring, org, invoiceId, deps.mailDomain);
      meta = { ...meta, send: requested.send };
      dispatchMail = requested.dispatch;
    }
    const body = responseJson(await getInvoiceOrThrow(tx, org, invoiceId), meta);
    // The key cannot have a response yet: the reserving request stored none, and every other request with this key
    // found the reservation and came here. Should one exist all the same, this transaction must not commit.
    const stored = await storeResponse(tx, deps.keyring, {
      organizationId: org,
      key: reservation.idempotency_key,
      requestHash: reservation.request_hash,
      status: reservation.response_status,
      body,
      location: reservation.response_location,
    });
    if (!stored) throw new Error(`the Idempotency-Key of the issue of ${invoiceId} already has a response`);
    await tx`DELETE FROM invoice_issues WHERE invoice_id = ${invoiceId}`;
    const [late] = await tx<{ due: boolean }[]>`SELECT ${row.due_date}::date < business_today(${org}) AS due`;
    return {
      organizationId: org,
      invoiceId,
      status: reservation.response_status,
      body,
      location: reservation.response_location,
      dispatchMail,
      dunningDue: row.type === 'invoice' && late!.due,
    };
  });
}
