import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { getReceipt } from '../../../payments/get-receipt.ts';
import type { AppDeps } from '../../app.ts';

const PaymentParams = Type.Object({ paymentId: Type.String({ description: 'Payment id (UUID)' }) }, { additionalProperties: false });

export function receiptRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { paymentId: string } }>(
    '/payments/:paymentId/receipt',
    {
      config: { scope: 'payments:read', rateClass: 'document' },
      schema: {
        summary: "Download a payment's receipt (PDF)",
        description:
          "The creditor's receipt for one payment, rendered shortly after the payment was booked and then fixed. Until it " +
          'exists the answer is 404 receipt_not_ready with Retry-After (seconds): retry then. An unknown payment is 404 payment_not_found.',
        tags: ['Payments'],
        params: PaymentParams,
        produces: ['application/pdf'],
        response: { 200: { description: 'The receipt PDF', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } } },
      },
    },
    async (req, reply) => {
      const receipt = await deps.db.read((sql) => getReceipt(sql, deps.documents, req.auth.organizationId, req.params.paymentId));
      return reply
        .type('application/pdf')
        .header('ETag', `"${receipt.sha256}"`)
        .header('Content-Disposition', `inline; filename="receipt-${receipt.paymentId}.pdf"`)
        .header('Cache-Control', 'private, max-age=31536000, immutable')
        .send(receipt.bytes);
    },
  );
}
