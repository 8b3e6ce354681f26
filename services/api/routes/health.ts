import type { FastifyInstance } from 'fastify';
import type { Db } from '../../../services/shared/db.ts';

export interface ReadinessProbe {
  name: string;
  check(): Promise<void>;
}

/** Liveness says the process answers; readiness says its dependencies answer too. Neither needs a key. */
export function registerHealthRoutes(app: FastifyInstance, db: Db, probes: ReadinessProbe[]): void {
  app.get('/healthz', { schema: { hide: true }, logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true }, logLevel: 'warn' }, async (_req, reply) => {
    const all: ReadinessProbe[] = [{ name: 'postgres', check: async () => void (await db.sql`SELECT 1`) }, ...probes];
    const results = await Promise.all(
      all.map(async (p) => {
        try {
          await withTimeout(p.check(), 2000);
          return [p.name, 'ok'] as const;
        } catch {
          return [p.name, 'unavailable'] as const;
        }
      }),
    );
    const checks = Object.fromEntries(results);
    const ready = results.every(([, s]) => s === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<T>((_, reject) => (t = setTimeout(() => reject(new Error('timeout')), ms))),
  ]);
}
