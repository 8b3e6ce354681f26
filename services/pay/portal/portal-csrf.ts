import csrfProtection from '@fastify/csrf-protection';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Keyring } from '../../shared/crypto.ts';
import type { PortalSession } from './portal-session.ts';
import { csrfSecretOf } from './portal-tokens.ts';
import type { Form } from './portal-context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * What @fastify/csrf-protection keeps its secret in (as with @fastify/session): on the portal, the signed-in
     * session's secret, derived rather than stored (withSessionCsrfSecret).
     */
    session: { csrfSecret: string } | undefined;
  }
}

/** The refusals of @fastify/csrf-protection (403): no secret (no session), or a token that is not the session's. */
export const isCsrfRefusal = (err: FastifyError): boolean => err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET';

/**
 * The signed-in pages' forms carry a CSRF token (`csrf`) of @fastify/csrf-protection, checked before anything is
 * changed (`app.csrfProtection` as a pre-handler). Its secret is per session and needs no storage: the keyring's MAC
 * of the session's hash (portal-tokens.ts), so a token is worthless for any other session and dies with it.
 */
export async function registerPortalCsrf(app: FastifyInstance): Promise<void> {
  app.decorateRequest('session', undefined);
  await app.register(csrfProtection, {
    sessionPlugin: '@fastify/session',
    sessionKey: 'csrfSecret',
    getToken: (req) => (req.body as Form)?.csrf,
  });
}

/** Gives a signed-in request its session's CSRF secret, for `reply.generateCsrf()` and `app.csrfProtection`. */
export function withSessionCsrfSecret(req: { session: { csrfSecret: string } | undefined }, keyring: Keyring, session: PortalSession): void {
  req.session = { csrfSecret: csrfSecretOf(keyring, session.hash) };
}
