import type { FastifyInstance } from 'fastify';
import type { Db } from '../../shared/db.ts';

/** How long the database may take to answer `SELECT 1` before the replica counts as not ready (as the API's /readyz). */
const READINESS_TIMEOUT_MS = 2000;

/**
 * Liveness says the process answers; readiness says PostgreSQL answers too, the way the API's /readyz asks it
 * (services/api/routes/health.ts): every page and callback of this service reads or writes the database, so a replica
 * that cannot reach it is taken out of the load balancer instead of answering 500s. Neither needs a key.
 */
export function healthRoutes(app: FastifyInstance, db: Db): void {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_req, reply) => {
    let postgres: 'ok' | 'unavailable';
    try {
      await withTimeout(db.sql`SELECT 1`.then(() => undefined), READINESS_TIMEOUT_MS);
      postgres = 'ok';
    } catch {
      postgres = 'unavailable';
    }
    const ready = postgres === 'ok';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks: { postgres } });
  });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<T>((_, reject) => (t = setTimeout(() => reject(new Error('timeout')), ms))),
  ]);
}
