import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Db } from '../../shared/db.ts';
import { findActivePortalByHost, type Portal } from './find-portal.ts';

/**
 * The portal's addresses (docs/customer-portal.md, "Addresses"): `<subdomain>.<PORTAL_BASE_DOMAIN>`, the
 * portal's verified custom domain, and `<pay base>/portal/<subdomain>`.
 *
 * A host is a portal's host only when it names an active portal now: the database is asked on each request (by the
 * router, through an asynchronous route constraint, see `portalHostConstraint`), so a portal activated, a custom
 * domain verified or a subdomain changed takes effect with the next request, and a host is always resolved to the
 * organisation whose portal it names at that moment. Never a portal's host: the pay service's own host (PAY_BASE_URL),
 * a verified payment domain, and names that cannot be a domain (IP addresses, single labels).
 */

/** The value the host constraint derives for a request on a portal's host; the portal's root routes carry it. */
export const ON_PORTAL_HOST = 'portal';
export const PORTAL_HOST_CONSTRAINT = 'portalHost';

export interface RequestHost {
  /** As it came, with the port when one was given, in lower case (for comparing with an Origin header). */
  host: string;
  /** Without port or final dot, in lower case (as domains are stored). */
  name: string;
}

/**
 * The host a request is for: X-Forwarded-Host (its last entry) only behind a trusted proxy (PAY_TRUST_PROXY), else
 * the Host header. The rule Fastify's `req.hostname` follows with the app's `trustProxy` (the payment-domain links
 * use that), here for the raw request the router sees.
 */
export function requestHost(req: IncomingMessage, trustProxy: boolean): RequestHost {
  const forwarded = trustProxy ? req.headers['x-forwarded-host'] : undefined;
  const raw = (forwarded ? String(forwarded).split(',').at(-1)! : req.headers.host ?? '').trim().toLowerCase();
  const name = raw.startsWith('[') ? raw.slice(0, raw.indexOf(']') + 1) : raw.replace(/:\d*$/, '').replace(/\.$/, '');
  return { host: raw, name };
}

const SUBDOMAIN = /^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

export interface PortalHostOptions {
  db: Db;
  /** PORTAL_BASE_DOMAIN, if portals are served at `<subdomain>.<baseDomain>`. */
  baseDomain: string | undefined;
  /** The pay service's own host name (of PAY_BASE_URL): never a portal's, whatever the base domain. */
  payHostname: string;
  trustProxy: boolean;
  log: FastifyBaseLogger;
}

/** The portal a request on a portal's host is for, as the router found it (read once, used by the route). */
const portalsOfRequests = new WeakMap<IncomingMessage, { portal: Portal; host: RequestHost }>();

export const portalOfHostRequest = (req: IncomingMessage): { portal: Portal; host: RequestHost } | undefined => portalsOfRequests.get(req);

/** The subdomain a host names under the base domain (one label only), if any. */
export function subdomainUnder(name: string, baseDomain: string | undefined): string | undefined {
  if (!baseDomain || !name.endsWith(`.${baseDomain}`)) return undefined;
  const sub = name.slice(0, -(baseDomain.length + 1));
  return SUBDOMAIN.test(sub) ? sub : undefined;
}

/**
 * A Fastify route constraint (asynchronous: it reads the database) whose value is ON_PORTAL_HOST for a request on an
 * active portal's host and nothing otherwise. The portal's root routes require it (mustMatchWhenDerived), so on a
 * portal's host only the portal's pages answer, and on any other host only the pay service's own routes do.
 */
type ConstraintStrategy = Parameters<FastifyInstance['addConstraintStrategy']>[0];
type RouteStore = ReturnType<ReturnType<ConstraintStrategy['storage']>['get']>;

export function portalHostConstraint(opts: PortalHostOptions): ConstraintStrategy {
  const baseDomain = opts.baseDomain?.toLowerCase().replace(/\.$/, '');
  const payHostname = opts.payHostname.toLowerCase();
  const strategy = {
    name: PORTAL_HOST_CONSTRAINT,
    mustMatchWhenDerived: true,
    storage() {
      const handlers = new Map<string, RouteStore>();
      return {
        get: (value: string) => handlers.get(value) ?? null,
        set: (value: string, store: RouteStore) => void handlers.set(value, store),
      };
    },
    validate(value: unknown) {
      if (value !== ON_PORTAL_HOST) throw new Error(`The ${PORTAL_HOST_CONSTRAINT} constraint takes only '${ON_PORTAL_HOST}'.`);
    },
    deriveConstraint(req: IncomingMessage, _ctx: unknown, done: (err: Error | null, value?: string) => void) {
      const host = requestHost(req, opts.trustProxy);
      const { name } = host;
      // Nothing to look up: the pay service's own host, and names no portal can have.
      if (!name || name === payHostname || !name.includes('.') || name.startsWith('[') || IPV4.test(name)) return done(null, undefined);
      opts.db.read((sql) => findActivePortalByHost(sql, name, subdomainUnder(name, baseDomain))).then(
        (portal) => {
          if (!portal) return done(null, undefined);
          portalsOfRequests.set(req, { portal, host });
          done(null, ON_PORTAL_HOST);
        },
        (err: unknown) => {
          // The router answers 500 (frameworkErrors); the cause is only known here.
          opts.log.error({ err }, 'the portal of a request\'s host could not be looked up');
          done(err instanceof Error ? err : new Error(String(err)));
        },
      );
    },
  };
  // find-my-way takes a deriveConstraint of three parameters as asynchronous; its type declares only the synchronous form.
  return strategy as unknown as ConstraintStrategy;
}
