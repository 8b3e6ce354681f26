import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, Uuid } from '../../../../contracts/common.ts';
import { Invoice } from '../../../../contracts/invoices.ts';
import { Payment, PaymentCreate, PaymentListQuery, PaymentOutcome } from '../../../../contracts/payments.ts';
import { getPayment } from '../../../payments/get-payment.ts';
import { listInvoicePayments } from '../../../payments/list-invoice-payments.ts';
import { listPayments } from '../../../payments/list-payments.ts';
import { registerPayment } from '../../../payments/register-payment.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const InvoiceParams = Type.Object({ invoiceId: Type.String({ description: 'Invoice id (UUID)' }) }, { additionalProperties: false });
const PaymentParams = Type.Object({ paymentId: Type.String({ description: 'Payment id (UUID)' }) }, { additionalProperties: false });
const RegistrationEnvelope = Type.Object({
  data: Invoice,
  meta: Type.Object(
    {
      outcome: PaymentOutcome,
      paymentId: Uuid,
      replayed: Type.Optional(Type.Boolean({ description: 'true when this key had booked the payment already' })),
    },
    { additionalProperties: true },
  ),
});
const tags = ['Payments'];

export function paymentRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;

  app.get<{ Params: { invoiceId: string }; Querystring: PaymentListQuery }>(
    '/invoices/:invoiceId/payments',
    {
      config: { scope: 'payments:read' },
      schema: {
        summary: "List an invoice's payments, newest first",
        tags,
        params: InvoiceParams,
        querystring: PaymentListQuery,
        response: { 200: ListEnvelope(Payment) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) =>
        listInvoicePayments(sql, keyring, req.auth.organizationId, req.params.invoiceId, req.query),
      );
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Params: { invoiceId: string }; Body: PaymentCreate }>(
    '/invoices/:invoiceId/payments',
    {
      config: { scope: 'payments:write' },
      schema: {
        summary: 'Register a payment received for an issued invoice',
        description:
          'The payment is booked on its Idempotency-Key, which stays with the payment for as long as it exists: the same key ' +
          'never books twice, however late the retry (it answers with the first payment; with another amount, date or invoice ' +
          'it is 409 idempotency_conflict). `meta.outcome` is `partial`, `paid_in_full` or `registered` (the invoice was settled ' +
          'already or the payment exceeds its balance; the surplus is kept as customer credit). The invoice becomes `paid` when its ' +
          'balance reaches 0. Drafts: 422 invoice_not_issued; credit notes: 422 credit_note_not_payable; a `paymentDate` after ' +
          "the organisation's today: 422 payment_date_in_future.",
        tags,
        params: InvoiceParams,
        body: PaymentCreate,
        response: { 201: RegistrationEnvelope },
      },
    },
    (req, reply) =>
      mutate(
        deps,
        req,
        reply,
        // The stored response had expired, but the payment kept its key: this is still a replay of that payment.
        registerPayment(deps, req.auth.organizationId, req.params.invoiceId, req.body, req.idempotencyKey!, () => reply.header('Idempotent-Replayed', 'true')),
      ),
  );

  app.get<{ Querystring: PaymentListQuery }>(
    '/payments',
    {
      config: { scope: 'payments:read' },
      schema: {
        summary: "List the organisation's payments from every channel, newest first",
        description: 'For reconciliation: newest registration first, in a keyset order that payments booked while paging never disturb.',
        tags,
        querystring: PaymentListQuery,
        response: { 200: ListEnvelope(Payment) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listPayments(sql, keyring, req.auth.organizationId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.get<{ Params: { paymentId: string } }>(
    '/payments/:paymentId',
    {
      config: { scope: 'payments:read' },
      schema: { summary: 'Get a payment', tags, params: PaymentParams, response: { 200: Envelope(Payment) } },
    },
    async (req) => ({ data: await db.read((sql) => getPayment(sql, req.auth.organizationId, req.params.paymentId)), meta: {} }),
  );
}
