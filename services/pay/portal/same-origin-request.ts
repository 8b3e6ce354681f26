import type { FastifyRequest } from 'fastify';
import type { RequestHost } from './portal-host.ts';

/**
 * Spending a link signs a browser in, so it must be this browser's own click on the confirmation page (login CSRF:
 * another site's form would sign the victim into the sender's account). Fetch metadata when the browser sends it;
 * an Origin of another host; and the confirmation page's cookie-bound token (portal-tokens.ts, confirmTokenOf),
 * which also covers browsers that send neither header. Our pages' `Referrer-Policy: no-referrer` makes browsers send
 * `Origin: null` on their own forms, so "null" alone proves nothing either way.
 */
export function sameOriginRequest(req: FastifyRequest, host: RequestHost): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  if (origin === undefined || origin === 'null') return true;
  try {
    // Compared as URLs of the same scheme, so a default port written or not makes no difference.
    const from = new URL(origin);
    return from.host === new URL(`${from.protocol}//${host.host}`).host;
  } catch {
    return false;
  }
}
