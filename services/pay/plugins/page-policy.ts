import type { FastifyReply } from 'fastify';

/**
 * The Content-Security-Policy of the pay service's pages (the pay page, the start-link pages, the customer portal):
 * their own stylesheet and images, no script, no framing, forms only to this origin. The pay page also names the
 * provider's checkout origins: its checkout form's answer is a redirect there, and browsers check that against
 * form-action.
 */
export function pageCsp(formOrigins: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self'",
    `form-action 'self' ${formOrigins.join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * How every HTML page of the pay service is sent (the pay page, the start-link pages, the customer portal): never
 * cached (balances and sessions change), its address never passed on (it may hold a reference or a token), never
 * framed or sniffed, under the page's own Content-Security-Policy.
 */
export function sendHtmlPage(reply: FastifyReply, status: number, body: string, contentSecurityPolicy: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Content-Security-Policy', contentSecurityPolicy)
    .send(body);
}

/** The pay page's and the portal's stylesheets: the same for everyone, cached for an hour, never sniffed. */
export function sendStylesheet(reply: FastifyReply, css: string | Buffer, cacheControl = 'public, max-age=3600'): FastifyReply {
  return reply.type('text/css; charset=utf-8').header('Cache-Control', cacheControl).header('X-Content-Type-Options', 'nosniff').send(css);
}
