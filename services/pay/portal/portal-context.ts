import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { DocumentStore } from '../../documents/document-store.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Keyring } from '../../shared/crypto.ts';
import type { Db } from '../../shared/db.ts';
import type { EngineClient } from '../../shared/engine-client.ts';
import { pickLanguage, type Language } from '../texts.ts';
import { findActivePortal, type Portal } from './find-portal.ts';
import { ON_PORTAL_HOST, PORTAL_HOST_CONSTRAINT, portalOfHostRequest, requestHost, type RequestHost } from './portal-host.ts';
import type { SignInLimits } from './request-sign-in-link.ts';
import type { PortalSession } from './portal-session.ts';

/** What the portal's routes share: the pay service's database, clock and addresses, and the portal's own dependencies. */
export interface PortalContext {
  db: Db;
  clock: Clock;
  /** Customers' e-mail blind index; the pending link's token at rest; CSRF secrets. */
  keyring: Keyring;
  documents: DocumentStore;
  /** Starts sign-in mails and due subscription periods at once; without it the housekeeping loop does. */
  engine?: EngineClient | undefined;
  limits?: SignInLimits | undefined;
  /** The pay service's public base URL (PAY_BASE_URL), without a final slash. */
  payBase: string;
  /** PAY_TRUST_PROXY: the request's host is X-Forwarded-Host (portal-host.ts, requestHost). */
  trustProxy: boolean;
  /** Cookies carry Secure when the pay service's address is https (and on any request that came over https). */
  secureCookies: boolean;
}

/** Where a request is: the portal (none when unknown or inactive), the base of its links, and the host it came for. */
export interface Where {
  base: string;
  portal: Portal | undefined;
  host: RequestHost;
}

/** A signed-in page's request: its portal, the session, and the page's language (require-signed-in.ts). */
export interface SignedInPage {
  base: string;
  portal: Portal;
  session: PortalSession;
  lang: Language;
}

export type Form = Record<string, string> | undefined;
export type Query = Record<string, string | undefined>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by requireSignedIn (require-signed-in.ts) on the portal's signed-in pages. */
    portalPage: SignedInPage | undefined;
  }
}

/**
 * The portal of a request: on a portal's host, the one the router found (links at the host's root); else the one at
 * `/portal/<subdomain>` (links under that).
 */
export async function whereOf(ctx: PortalContext, req: FastifyRequest): Promise<Where> {
  const onHost = portalOfHostRequest(req.raw);
  if (onHost) return { base: '', portal: onHost.portal, host: onHost.host };
  const sub = ((req.params as { subdomain?: string }).subdomain ?? '').toLowerCase();
  return { base: `/portal/${sub}`, portal: await ctx.db.read((sql) => findActivePortal(sql, sub)), host: requestHost(req.raw, ctx.trustProxy) };
}

/** The language of a portal page: the form's or the query's `lang`, else the browser's, else the fallback (the customer's). */
export function portalLanguage(req: FastifyRequest, fallback?: Language | null): Language {
  const q = req.query as Record<string, unknown> | undefined;
  const b = req.body as Record<string, unknown> | undefined;
  return pickLanguage(b?.lang ?? q?.lang, req.headers['accept-language'], fallback ?? undefined);
}

export const homeOf = (base: string): string => base || '/';
export const withLang = (href: string, lang: Language): string => `${href}${href.includes('?') ? '&' : '?'}lang=${lang}`;

type PortalRoute<P> = { Params: P; Body: Form; Querystring: Query };

/** Each page at both addresses: `/portal/<subdomain><path>`, and `<path>` on a portal's own host (portal-host.ts). */
export function portalRoute<P extends object = object>(
  app: FastifyInstance,
  method: 'GET' | 'POST',
  path: string,
  opts: { preHandler?: preHandlerHookHandler[] },
  handler: (req: FastifyRequest<PortalRoute<P>>, reply: FastifyReply) => Promise<unknown>,
): void {
  const preHandler = opts.preHandler ?? [];
  app.route<PortalRoute<P & { subdomain?: string }>>({ method, url: `/portal/:subdomain${path}`, preHandler, handler });
  app.route<PortalRoute<P>>({
    method, url: path || '/', constraints: { [PORTAL_HOST_CONSTRAINT]: ON_PORTAL_HOST }, preHandler, handler,
  });
}

/** The signed-in page a request has passed requireSignedIn with. */
export function signedInPage(req: FastifyRequest): SignedInPage {
  if (!req.portalPage) throw new Error('A signed-in portal route lacks its requireSignedIn pre-handler.');
  return req.portalPage;
}
