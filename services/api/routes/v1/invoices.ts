import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { Envelope, ListEnvelope, ListQuery } from '../../../../contracts/common.ts';
import { EInvoiceQuery, Invoice, InvoiceCreate, InvoiceCreateQuery, InvoiceListQuery, InvoiceReplace, IssueBody } from '../../../../contracts/invoices.ts';
import { createAndIssueInvoice } from '../../../invoices/create-and-issue-invoice.ts';
import { issueDraft } from '../../../invoices/issue-draft.ts';
import { replaceInvoice } from '../../../invoices/replace-invoice.ts';
import { deleteInvoice } from '../../../invoices/delete-invoice.ts';
import { listInvoices } from '../../../invoices/list-invoices.ts';
import { getInvoiceOrThrow } from '../../../invoices/invoice-queries.ts';
import { getInvoiceDocument } from '../../../invoices/get-invoice-document.ts';
import { getTimeline } from '../../../invoices/get-timeline.ts';
import { creditInvoice } from '../../../invoices/credit-invoice.ts';
import { queueCreditNote } from '../../../invoices/credit-queue.ts';
import { emailInvoice } from '../../../invoices/email-invoice.ts';
import { getEInvoice, type EInvoiceDocument } from '../../../einvoices/get-einvoice.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const InvoiceParams = Type.Object({ invoiceId: Type.String({ description: 'Invoice id (UUID)' }) }, { additionalProperties: false });
const CreditBody = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false });
const TimelineQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
const TimelineItem = Type.Object({ code: Type.String(), at: Type.String({ format: 'date-time' }), data: Type.Object({}, { additionalProperties: true }) });
const tags = ['Invoices'];

type Params = { invoiceId: string };

/** Sends the stored PDF bytes as they are, with their hash as the ETag. */
export function sendPdf(reply: FastifyReply, doc: { bytes: Buffer; sha256: string; number: number }, name: string): FastifyReply {
  return reply
    .type('application/pdf')
    .header('ETag', `"${doc.sha256}"`)
    .header('Content-Disposition', `inline; filename="${name}-${doc.number}.pdf"`)
    .header('Cache-Control', 'private, max-age=31536000, immutable')
    .send(doc.bytes);
}

/** Sends a stored e-invoice's bytes as they are, with their hash as the ETag. */
export function sendEInvoice(reply: FastifyReply, doc: EInvoiceDocument, name: string): FastifyReply {
  return reply
    .type('application/xml; charset=utf-8')
    .header('ETag', `"${doc.sha256}"`)
    .header('Content-Disposition', `inline; filename="${name}-${doc.number}.${doc.profile}.xml"`)
    .header('Cache-Control', 'private, max-age=31536000, immutable')
    .send(doc.bytes);
}

/** The OpenAPI description of GET …/einvoice, shared by invoices and credit notes. */
export const EINVOICE_ROUTE_DOC = {
  description:
    'The UBL 2.1 e-invoice (Peppol BIS Billing 3.0 or OIOUBL 2.1) of the issued document, with its PDF embedded, built from the issue ' +
    "snapshot the first time a profile is asked for and stored: every later request answers the same bytes (ETag: their SHA-256). " +
    'A draft is 422 invoice_not_issued; a document whose issued buyer lacks what the profile needs (an e-invoice address; a VAT number ' +
    'for reverse-charge or intra-EU lines) is 422 einvoice_not_possible, each missing item in `details`.',
  produces: ['application/xml'],
  response: { 200: { description: 'The e-invoice', content: { 'application/xml': { schema: { type: 'string' } } } } },
};

export function invoiceRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;

  app.get<{ Querystring: InvoiceListQuery }>(
    '/invoices',
    {
      config: { scope: 'invoices:read' },
      schema: { summary: 'List invoices, newest first', tags, querystring: InvoiceListQuery, response: { 200: ListEnvelope(Invoice) } },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listInvoices(sql, keyring, req.auth.organizationId, 'invoice', req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Body: InvoiceCreate; Querystring: Static<typeof InvoiceCreateQuery> }>(
    '/invoices',
    {
      config: { scope: 'invoices:write' },
      schema: {
        summary: 'Create an invoice (draft), optionally issuing it in the same call',
        description:
          'Give `customerId` or an inline `customer` (never both): an inline customer is found by externalReference, then cvr, ' +
          'then email, or created (creating one also needs the customers:write scope); an existing customer is never overwritten. ' +
          '`issue=true` assigns the next number and locks the PDF atomically with the creation; it needs the organisation\'s name, ' +
          'street, postal code, city and CVR (422 seller_details_incomplete, each missing field in `details`, nothing created).',
        tags,
        querystring: InvoiceCreateQuery,
        body: InvoiceCreate,
        response: { 201: Envelope(Invoice) },
      },
    },
    async (req, reply) => mutate(deps, req, reply, createAndIssueInvoice(deps, req.auth, req.body, req.query)),
  );

  app.get<{ Params: Params }>(
    '/invoices/:invoiceId',
    {
      config: { scope: 'invoices:read' },
      schema: { summary: 'Get an invoice with its lines', tags, params: InvoiceParams, response: { 200: Envelope(Invoice) } },
    },
    async (req) => ({ data: await db.read((sql) => getInvoiceOrThrow(sql, req.auth.organizationId, req.params.invoiceId)), meta: {} }),
  );

  app.put<{ Params: Params; Body: InvoiceReplace }>(
    '/invoices/:invoiceId',
    {
      config: { scope: 'invoices:write' },
      schema: {
        summary: 'Replace a draft as a whole',
        description: 'Only drafts: an issued invoice is immutable (422 invoice_not_editable). Lines are recalculated.',
        tags,
        params: InvoiceParams,
        body: InvoiceReplace,
        response: { 200: Envelope(Invoice) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await replaceInvoice(tx, req.auth.organizationId, req.params.invoiceId, req.body),
      })),
  );

  app.delete<{ Params: Params }>(
    '/invoices/:invoiceId',
    {
      config: { scope: 'invoices:write' },
      schema: { summary: 'Delete a draft', tags, params: InvoiceParams, response: { 204: Type.Null({ description: 'Deleted' }) } },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => {
        await deleteInvoice(tx, req.auth.organizationId, req.params.invoiceId);
        return { status: 204 };
      }),
  );

  app.post<{ Params: Params; Body: IssueBody | undefined }>(
    '/invoices/:invoiceId/issue',
    {
      config: { scope: 'invoices:write' },
      schema: {
        summary: 'Issue a draft: next number and a locked PDF, atomically',
        description:
          'Optional `issueDate` (default: today in Europe/Copenhagen) and `dueDate` (default: the draft\'s, else issue date + payment terms). ' +
          'Needs the organisation\'s name, street, postal code, city and CVR: without them 422 seller_details_incomplete, each missing ' +
          'field in `details` (`/seller/street`, …), and no number is used.',
        tags,
        params: InvoiceParams,
        body: IssueBody,
        response: { 200: Envelope(Invoice) },
      },
    },
    (req, reply) => mutate(deps, req, reply, issueDraft(deps, req.auth.organizationId, req.params.invoiceId, req.body ?? {})),
  );

  app.post<{ Params: Params }>(
    '/invoices/:invoiceId/send',
    {
      config: { scope: 'invoices:write' },
      schema: {
        summary: 'E-mail the invoice with its PDF',
        description:
          'The mail goes out after the call, from a durable workflow that retries transient mail-server failures. ' +
          '`meta.send` is `{status: "sent"}` (taken for delivery, and `data.sentAt` is that moment; the timeline shows sent, delivered ' +
          'or send_failed, which clears `sentAt` again) or ' +
          '`{status: "failed", code: "customer_email_missing"}`; the invoice stays issued either way. A second send does not mail again.',
        tags,
        params: InvoiceParams,
        response: { 200: Envelope(Invoice) },
      },
    },
    (req, reply) => mutate(deps, req, reply, emailInvoice(deps, req.auth.organizationId, req.params.invoiceId)),
  );

  app.get<{ Params: Params }>(
    '/invoices/:invoiceId/pdf',
    {
      config: { scope: 'invoices:read', rateClass: 'document' },
      schema: {
        summary: 'Download the locked PDF',
        description: 'Exactly the stored bytes; the ETag is their SHA-256, verified on every read.',
        tags,
        params: InvoiceParams,
        produces: ['application/pdf'],
        response: { 200: { description: 'The PDF', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } } },
      },
    },
    async (req, reply) => {
      const doc = await db.read((sql) => getInvoiceDocument(sql, deps.documents, req.auth.organizationId, req.params.invoiceId, 'invoice'));
      return sendPdf(reply, doc, 'invoice');
    },
  );

  app.get<{ Params: Params; Querystring: EInvoiceQuery }>(
    '/invoices/:invoiceId/einvoice',
    {
      config: { scope: 'invoices:read', rateClass: 'document' },
      schema: { summary: 'Download the e-invoice (OIOUBL or Peppol BIS 3)', tags, params: InvoiceParams, querystring: EInvoiceQuery, ...EINVOICE_ROUTE_DOC },
    },
    async (req, reply) => {
      const doc = await getEInvoice(db, deps.documents, req.auth.organizationId, req.params.invoiceId, 'invoice', req.query.profile);
      return sendEInvoice(reply, doc, 'invoice');
    },
  );

  app.get<{ Params: Params; Querystring: Static<typeof TimelineQuery> }>(
    '/invoices/:invoiceId/timeline',
    {
      config: { scope: 'invoices:read' },
      schema: {
        summary: "The invoice's timeline, oldest first",
        tags,
        params: InvoiceParams,
        querystring: TimelineQuery,
        response: { 200: ListEnvelope(TimelineItem) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => getTimeline(sql, deps.keyring, req.auth.organizationId, req.params.invoiceId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Params: Params; Body: Static<typeof CreditBody> }>(
    '/invoices/:invoiceId/credit',
    {
      config: { scope: 'invoices:write' },
      schema: {
        summary: 'Credit an issued invoice in full',
        description:
          'Creates, numbers and PDF-locks a credit note in the same call. Once per invoice; not for drafts or invoices in collections ' +
          '(422 invoice_not_creditable). Needs the seller details an issue needs (422 seller_details_incomplete).',
        tags,
        params: InvoiceParams,
        body: CreditBody,
        response: { 201: Envelope(Invoice) },
      },
    },
    (req, reply) =>
      queueCreditNote(req.auth.organizationId, () =>
        mutate(deps, req, reply, async (tx) => {
          const note = await creditInvoice(tx, deps, req.auth.organizationId, req.params.invoiceId, req.body.reason);
          return { status: 201, data: note, location: `/v1/creditnotes/${note.id}` };
        }),
      ),
  );
}
