import type { FastifyInstance } from 'fastify';

/**
 * Every answer names its request (`Request-Id`), as the API's do, so a customer or provider can quote it; and every
 * request is logged once, when answered, with its masked line (the logger's serializers, app.ts).
 */
export function registerRequestLog(app: FastifyInstance): void {
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('Request-Id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    req.log.info({ req, res: reply, responseTime: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
    done();
  });
}
