import type { FastifyInstance } from 'fastify';
import { findPayPageLogo } from '../../branding/pay-page-logo.ts';
import type { Db } from '../../shared/db.ts';

/** `GET /p/:reference/logo/:sha256`: the invoice page's logo; anything not found goes to the service's own 404 page. */
export function logoRoutes(app: FastifyInstance, db: Db): void {
  app.get<{ Params: { reference: string; sha256: string } }>('/p/:reference/logo/:sha256', async (req, reply) => {
    const logo = await db.read((sql) => findPayPageLogo(sql, req.params.reference, req.params.sha256));
    if (!logo) return reply.callNotFound();
    return reply
      .type(logo.mime)
      // Named by its hash, the image never changes; private, as its address carries the link's reference.
      .header('Cache-Control', 'private, max-age=86400, immutable')
      .header('Referrer-Policy', 'no-referrer')
      .header('X-Content-Type-Options', 'nosniff')
      // An SVG opened on its own runs nothing and loads nothing (it is sanitised at upload as well).
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
      .send(logo.content);
  });
}
