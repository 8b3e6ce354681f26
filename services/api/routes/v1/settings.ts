import type { FastifyInstance } from 'fastify';
import { Envelope } from '../../../../contracts/common.ts';
import { Settings } from '../../../../contracts/settings.ts';
import { getSettings } from '../../../organizations/get-settings.ts';
import type { AppDeps } from '../../app.ts';

export function settingsRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get(
    '/settings',
    {
      config: { scope: 'settings:read' },
      schema: {
        summary: "The organisation's settings",
        description:
          'Changed by the operator command (`update-org`), read here. `address` and `bank` are always objects with every key ' +
          '(null where unset). A new organisation is on the `standard` plan, `unverified`, with 14 days\' payment terms.',
        tags: ['Settings'],
        response: { 200: Envelope(Settings) },
      },
    },
    async (req) => ({ data: await deps.db.read((sql) => getSettings(sql, req.auth.organizationId)), meta: {} }),
  );
}
