import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { Envelope, ListEnvelope, ListQuery, Uuid } from '../../../../contracts/common.ts';
import { Invoice } from '../../../../contracts/invoices.ts';
import { listInvoices } from '../../../invoices/list-invoices.ts';
import { getInvoiceOrThrow } from '../../../invoices/invoice-queries.ts';
import { getInvoiceDocument } from '../../../invoices/get-invoice-document.ts';
import type { AppDeps } from '../../app.ts';
import { EINVOICE_ROUTE_DOC, sendEInvoice, sendPdf } from './invoices.ts';
import { EInvoiceQuery } from '../../../../contracts/invoices.ts';
import { getEInvoice } from '../../../einvoices/get-einvoice.ts';

const Params = Type.Object({ creditNoteId: Type.String({ description: 'Credit note id (UUID)' }) }, { additionalProperties: false });
const CreditNoteListQuery = Type.Object({ customerId: Type.Optional(Uuid), ...ListQuery }, { additionalProperties: false });
const tags = ['Credit notes'];

export function creditNoteRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;

  app.get<{ Querystring: Static<typeof CreditNoteListQuery> }>(
    '/creditnotes',
    {
      config: { scope: 'invoices:read' },
      schema: { summary: 'List credit notes, newest first', tags, querystring: CreditNoteListQuery, response: { 200: ListEnvelope(Invoice) } },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listInvoices(sql, keyring, req.auth.organizationId, 'creditNote', req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.get<{ Params: { creditNoteId: string } }>(
    '/creditnotes/:creditNoteId',
    {
      config: { scope: 'invoices:read' },
      schema: { summary: 'Get a credit note with its lines', tags, params: Params, response: { 200: Envelope(Invoice) } },
    },
    async (req) => ({
      data: await db.read((sql) => getInvoiceOrThrow(sql, req.auth.organizationId, req.params.creditNoteId, 'creditNote')),
      meta: {},
    }),
  );

  app.get<{ Params: { creditNoteId: string } }>(
    '/creditnotes/:creditNoteId/pdf',
    {
      config: { scope: 'invoices:read', rateClass: 'document' },
      schema: {
        summary: "Download the credit note's locked PDF",
        tags,
        params: Params,
        response: { 200: { description: 'The PDF', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } } },
      },
    },
    async (req, reply) => {
      const doc = await db.read((sql) =>
        getInvoiceDocument(sql, deps.documents, req.auth.organizationId, req.params.creditNoteId, 'creditNote'),
      );
      return sendPdf(reply, doc, 'credit-note');
    },
  );

  app.get<{ Params: { creditNoteId: string }; Querystring: EInvoiceQuery }>(
    '/creditnotes/:creditNoteId/einvoice',
    {
      config: { scope: 'invoices:read', rateClass: 'document' },
      schema: { summary: "Download the credit note's e-invoice (OIOUBL or Peppol BIS 3)", tags, params: Params, querystring: EInvoiceQuery, ...EINVOICE_ROUTE_DOC },
    },
    async (req, reply) => {
      const doc = await getEInvoice(db, deps.documents, req.auth.organizationId, req.params.creditNoteId, 'creditNote', req.query.profile);
      return sendEInvoice(reply, doc, 'credit-note');
    },
  );
}
