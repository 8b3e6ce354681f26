import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { readTrackingToken } from '../../invoices/tracking-token.ts';
import { recordInvoiceOpened } from '../../invoices/record-open.ts';
import type { AppDeps } from '../app.ts';

// A transparent 1×1 GIF.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/**
 * The tracking pixel of invoice mails (no key: mail clients fetch it). It always answers with the pixel, whatever the
 * token, so it tells a prober nothing; a valid token records `opened` once.
 */
export function trackingRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: { token: string } }>(
    '/t/o/:token',
    { schema: { hide: true, params: Type.Object({ token: Type.String({ maxLength: 200 }) }) }, logLevel: 'warn' },
    async (req, reply) => {
      const ref = readTrackingToken(deps.keyring, req.params.token.replace(/\.gif$/, ''));
      if (ref) await deps.db.tx((tx) => recordInvoiceOpened(tx, ref.organizationId, ref.invoiceId));
      return reply.type('image/gif').header('Cache-Control', 'no-store').send(PIXEL);
    },
  );
}
