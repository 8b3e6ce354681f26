import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope } from '../../../../contracts/common.ts';
import { PaymentLink } from '../../../../contracts/payment-links.ts';
import { getOrCreatePaymentLink } from '../../../payments/payment-links.ts';
import { DEFAULT_PAY_PORT } from '../../../../services/shared/config.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const InvoiceParams = Type.Object({ invoiceId: Type.String({ description: 'Invoice id (UUID)' }) }, { additionalProperties: false });
const tags = ['Payments'];
const description =
  'One link per issued invoice, the same on every call: `url` opens the hosted pay page, `reference` (128 random bits) is ' +
  "its path, and `paymentCode` (XXXX-XXXX) can be typed on the pay page's front page instead. The page always shows and " +
  'charges the balance at the moment the customer pays. Drafts: 422 invoice_not_issued; credit notes: 422 credit_note_not_payable.';

export function paymentLinkRoutes(app: FastifyInstance, deps: AppDeps): void {
  const base = deps.payBaseUrl ?? `http://127.0.0.1:${DEFAULT_PAY_PORT}`;

  app.get<{ Params: { invoiceId: string } }>(
    '/invoices/:invoiceId/payment-link',
    {
      config: { scope: 'payments:read' },
      schema: { summary: "Get the invoice's payment link", description, tags, params: InvoiceParams, response: { 200: Envelope(PaymentLink) } },
    },
    // A transaction, not a read: the first request for an invoice's link creates it.
    async (req) => ({ data: await deps.db.tx((tx) => getOrCreatePaymentLink(tx, req.auth.organizationId, req.params.invoiceId, base)), meta: {} }),
  );

  app.post<{ Params: { invoiceId: string } }>(
    '/invoices/:invoiceId/payment-link',
    {
      config: { scope: 'payments:write' },
      schema: {
        summary: "Create (or get) the invoice's payment link",
        description: `${description} Idempotent: answers 200 with the same link as GET.`,
        tags,
        params: InvoiceParams,
        response: { 200: Envelope(PaymentLink) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await getOrCreatePaymentLink(tx, req.auth.organizationId, req.params.invoiceId, base),
      })),
  );
}
