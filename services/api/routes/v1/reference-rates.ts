import type { FastifyInstance } from 'fastify';
import { ListEnvelope } from '../../../../contracts/common.ts';
import { ReferenceRate, ReferenceRateListQuery } from '../../../../contracts/reference-rates.ts';
import { listReferenceRates } from '../../../interest/list-reference-rates.ts';
import type { AppDeps } from '../../app.ts';

export function referenceRateRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;
  app.get<{ Querystring: ReferenceRateListQuery }>(
    '/reference-rates',
    {
      config: { scope: 'reminders:read' },
      schema: {
        summary: "Nationalbanken's reference rates by half-year",
        description:
          'Newest first. Late-payment interest (renteloven § 5) accrues at the statutory rate (reference + 8 percentage points) ' +
          'of the half-year a day falls in; a half-year without its own row uses the latest earlier one. Rates are the same ' +
          'for every organisation and set by the operator.',
        tags: ['Reminders'],
        querystring: ReferenceRateListQuery,
        response: { 200: ListEnvelope(ReferenceRate) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listReferenceRates(sql, keyring, req.auth.organizationId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );
}
