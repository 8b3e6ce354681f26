import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_HOURS } from './redeem-sign-in-link.ts';

/** The signed-in session (portal-session.ts): the portal's whole path, sent along with links from mails (Lax). */
export const SESSION_COOKIE = 'portal_session';
/** The confirmation page's own cookie against login CSRF (portal-tokens.ts, confirmTokenOf). */
export const CONFIRM_COOKIE = 'portal_confirm';
/** As long as a link lives (request-sign-in-link.ts). */
const CONFIRM_COOKIE_SECONDS = 15 * 60;

/** The portal reads its cookies through @fastify/cookie (`req.cookies`), parsed when a request comes in. */
export async function registerPortalCookies(app: FastifyInstance): Promise<void> {
  await app.register(cookie);
}

/** A cookie of the request; the first one when a name comes twice. */
export const cookieOf = (req: FastifyRequest, name: string): string | undefined => req.cookies[name];

/**
 * A portal cookie's Set-Cookie: HttpOnly always, Secure when the pay service's address is https or the request came
 * over https, with the attributes in the order the portal has always sent them (Path, Max-Age, HttpOnly, SameSite,
 * Secure). Written here rather than by @fastify/cookie's `setCookie`, whose serializer puts Max-Age before Path and
 * adds an Expires date to a cleared cookie: the portal's Set-Cookie headers stay byte for byte what they have been.
 */
function setPortalCookie(
  reply: FastifyReply, secure: boolean, name: string, value: string, attrs: { path: string; maxAge: number; sameSite: 'Strict' | 'Lax' },
): FastifyReply {
  return reply.header('Set-Cookie', [
    `${name}=${value}`, `Path=${attrs.path}`, `Max-Age=${attrs.maxAge}`, 'HttpOnly', `SameSite=${attrs.sameSite}`,
    ...(secure || reply.request.protocol === 'https' ? ['Secure'] : []),
  ].join('; '));
}

/** The confirmation page's cookie, only sent back to the link's own pages, never with another site's form (Strict). */
export const setConfirmCookie = (reply: FastifyReply, secure: boolean, base: string, browserToken: string): FastifyReply =>
  setPortalCookie(reply, secure, CONFIRM_COOKIE, browserToken, { path: `${base}/sign-in`, maxAge: CONFIRM_COOKIE_SECONDS, sameSite: 'Strict' });

export const setSessionCookie = (reply: FastifyReply, secure: boolean, home: string, sessionToken: string): FastifyReply =>
  setPortalCookie(reply, secure, SESSION_COOKIE, sessionToken, { path: home, maxAge: SESSION_HOURS * 3600, sameSite: 'Lax' });

export const clearSessionCookie = (reply: FastifyReply, secure: boolean, home: string): FastifyReply =>
  setPortalCookie(reply, secure, SESSION_COOKIE, '', { path: home, maxAge: 0, sameSite: 'Lax' });
