import type { FastifyReply } from 'fastify';

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
