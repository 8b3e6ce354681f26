import type { FastifyInstance } from 'fastify';

/** Liveness: the process answers. The pay service has no readiness probe of its own (the API's checks the database). */
export function healthRoutes(app: FastifyInstance): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
}
