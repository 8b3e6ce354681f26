import type { FastifyInstance } from 'fastify';
import { HAND_OVER_AFTER_DAYS, LIMITATION_YEARS } from '../../../law/danish-law.ts';
import { Type } from 'typebox';
import { Envelope } from '../../../../contracts/common.ts';
import { CaseStatusView } from '../../../../contracts/cases.ts';
import { openInvoiceCase } from '../../../cases/open-invoice-case.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const InvoiceParams = Type.Object({ invoiceId: Type.String({ description: 'Invoice id (UUID)' }) }, { additionalProperties: false });

export function collectRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Params: { invoiceId: string } }>(
    '/invoices/:invoiceId/collect',
    {
      config: { scope: 'cases:write' },
      schema: {
        summary: 'Hand an invoice over to debt collection',
        description:
          'Creates a collection case for the invoice (no body): the invoice becomes `collections` (`invoice.collections`, ' +
          'timeline `collections`) and its reminders end; the case (`sag.oprettet`) sends or reuses the påkrav and is handed ' +
          'to the collection partner on the påkrav date + ' + HAND_OVER_AFTER_DAYS + ' days. Refusals, all 422 and checked in this order: ' +
          '`invoice_not_issued` (a draft), `invoice_already_paid` (balance 0 or less), `invoice_not_due` (due date today or ' +
          'later), `only_fees_outstanding` (the principal is paid, only reminder fees are left), `reminder_flow_incomplete` ' +
          '(fewer reminders sent than the plan has), `claim_time_barred` (due ' + LIMITATION_YEARS + ' years or more ago). A repeat call, under any ' +
          'Idempotency-Key, answers 200 with the same case and `meta.replayed: true`.',
        tags: ['Collection cases'],
        params: InvoiceParams,
        // One documented success (the repeat answers 200 with the same envelope, as the description says).
        response: { 201: Envelope(CaseStatusView) },
      },
    },
    (req, reply) => mutate(deps, req, reply, openInvoiceCase(deps, req.auth.organizationId, req.params.invoiceId)),
  );
}
