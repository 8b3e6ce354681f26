import type { FastifyInstance } from 'fastify';
import { ListEnvelope } from '../../../../contracts/common.ts';
import { EventEnvelope, EventListQuery } from '../../../../contracts/events.ts';
import { listEvents } from '../../../events/list-events.ts';
import type { AppDeps } from '../../app.ts';

export function eventRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;
  app.get<{ Querystring: EventListQuery }>(
    '/events',
    {
      config: { scope: 'events:read' },
      schema: {
        summary: 'The event feed, oldest first',
        description:
          'The same event log webhooks deliver from, each item in exactly the webhook body shape. `since` (date-time ' +
          'with offset, or YYYY-MM-DD from midnight Europe/Copenhagen) and `type` filter; page with `cursor`.',
        tags: ['Events'],
        querystring: EventListQuery,
        response: { 200: ListEnvelope(EventEnvelope) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listEvents(sql, keyring, req.auth.organizationId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );
}
