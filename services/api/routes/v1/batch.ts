import type { FastifyInstance } from 'fastify';
import { BatchRequest, BatchResponse } from '../../../../contracts/batch.ts';
import { runBatch } from '../../../batch/run-batch.ts';
import { sendAnswer } from '../../idempotency.ts';
import { requestFingerprint } from '../../../idempotency/request-fingerprint.ts';
import type { AppDeps } from '../../app.ts';

export function batchRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: BatchRequest }>(
    '/batch',
    {
      config: { scopesPerOperation: true },
      schema: {
        summary: 'Run up to 100 creations and payments in one request',
        description:
          'Operations run in request order, each in its own transaction, as the single call it stands for: `customer.create` ' +
          '(POST /v1/customers, scope customers:write), `invoice.create` (POST /v1/invoices with `issue`/`send` in the params, ' +
          'invoices:write) and `payment.register` (POST /v1/invoices/{invoiceId}/payments, payments:write). Each result has the ' +
          "status the single call would have answered and its body's `data` (and `meta`) or `error`; one failing operation " +
          'fails alone. The batch itself is refused (400) only when `operations` is not an array of 1..100 objects. Each ' +
          'operation is stored under the key `<Idempotency-Key>:<index>`: a payment is booked on it, a retried batch replays ' +
          'what it had finished and runs the rest, and the batch key replays the whole response.',
        tags: ['Batch'],
        body: BatchRequest,
        response: { 200: BatchResponse },
      },
    },
    async (req, reply) => {
      const hash = requestFingerprint(deps.keyring, req.method, req.url, req.body);
      const answer = await runBatch(
        deps,
        { auth: req.auth, key: req.idempotencyKey!, hash, requestId: req.id, log: req.log },
        req.body.operations,
      );
      return sendAnswer(reply, answer);
    },
  );
}
