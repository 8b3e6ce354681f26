import type { FastifyInstance } from 'fastify';
import { Envelope } from '../../../../contracts/common.ts';
import { Discovery } from '../../../../contracts/discovery.ts';
import { SCOPES } from '../../../../contracts/scopes.ts';

export function discoveryRoutes(app: FastifyInstance): void {
  app.get(
    '',
    {
      config: { scope: 'api:discovery' },
      schema: { summary: 'Discover the API version and what this key may do', tags: ['Discovery'], response: { 200: Envelope(Discovery) } },
    },
    async (req) => ({
      data: {
        apiVersion: 'v1' as const,
        descriptionVersion: '1.0.0',
        organizationId: req.auth.organizationId,
        // In catalogue order, whatever order the key was created with.
        scopes: SCOPES.filter((s) => req.auth.scopes.has(s)),
      },
      meta: {},
    }),
  );
}
