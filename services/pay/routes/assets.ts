import type { FastifyInstance } from 'fastify';
import { PAY_CSS } from '../pages.ts';
import { sendStylesheet } from '../plugins/page-policy.ts';

/** The pay page's stylesheet (the start-link pages use it too). */
export function assetRoutes(app: FastifyInstance): void {
  app.get('/assets/pay.css', async (_req, reply) => sendStylesheet(reply, PAY_CSS));
}
