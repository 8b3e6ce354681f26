import type { FastifyInstance } from 'fastify';
import { ListEnvelope } from '../../../../contracts/common.ts';
import { Settlement, SettlementListQuery } from '../../../../contracts/settlements.ts';
import { listSettlements } from '../../../settlements/list-settlements.ts';
import type { AppDeps } from '../../app.ts';

export function settlementRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Querystring: SettlementListQuery }>(
    '/settlements',
    {
      config: { scope: 'settlements:read' },
      schema: {
        summary: 'Payouts of card and MobilePay payments, newest first',
        description:
          "Computed from the payments: each business day's (Monday to Friday) card and MobilePay payments are paid out on the next " +
          'business day, a weekend payment with the following Monday. Fees per payment, rounded half away from zero: card 1.45 % + ' +
          "100 øre, MobilePay 1 %. `held` while the organisation is not verified; otherwise `pending` before the payout date and " +
          '`paid` from it. `from`/`to` bound the payout date.',
        tags: ['Settlements'],
        querystring: SettlementListQuery,
        response: { 200: ListEnvelope(Settlement) },
      },
    },
    async (req) => {
      const org = req.auth.organizationId;
      const today = await deps.clock.today(org);
      const { items, nextCursor } = await deps.db.read((sql) => listSettlements(sql, deps.keyring, org, req.query, today));
      return { data: items, meta: { nextCursor } };
    },
  );
}
