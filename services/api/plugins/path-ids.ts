import type { FastifyInstance, preHandlerHookHandler } from 'fastify';
import { isUuid } from '../../../services/shared/ids.ts';

/**
 * The id that names no resource: the nil UUID. Ids are UUIDv7 (services/shared/ids.ts), whose version nibble is 7,
 * so no row ever has it.
 */
export const NO_SUCH_ID = '00000000-0000-0000-0000-000000000000';

/** Path parameters of the API's authenticated routes that are not resource ids: a reminder flow's key and version. */
const NOT_IDS = new Set(['flowKey', 'version']);

/** A path parameter is an id when its name says so (`invoiceId`, `userId`, …). */
const isIdParam = (name: string): boolean => name.endsWith('Id');

const paramNames = (url: string): string[] => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);

/**
 * Every id in a route's path is checked before the route's handler runs: a value that is not a UUID cannot name a
 * resource, so it is replaced by NO_SUCH_ID and the route answers exactly as it does for an unknown id (the same
 * status, code and message, after the same checks of key, plan, scope, Idempotency-Key and body), while the raw
 * value never reaches SQL, where PostgreSQL would refuse it as a uuid and quote it in its error. One place for every
 * route, present and future: a scoped route whose path parameter is neither named `…Id` nor listed in NOT_IDS is
 * refused when the app starts, so a new kind of id cannot slip past the check.
 */
export function registerPathIdCheck(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const names = paramNames(route.url);
    const ids = names.filter(isIdParam);
    const scoped = !!route.config?.scope || !!route.config?.scopesPerOperation;
    const unclassified = names.find((n) => !isIdParam(n) && !NOT_IDS.has(n));
    if (scoped && unclassified) {
      throw new Error(`${route.url}: the path parameter ${unclassified} must be named …Id (a resource id) or be listed in NOT_IDS`);
    }
    if (ids.length === 0) return;
    const check: preHandlerHookHandler = (req, _reply, done) => {
      const params = req.params as Record<string, string>;
      for (const name of ids) if (!isUuid(params[name] ?? '')) params[name] = NO_SUCH_ID;
      done();
    };
    route.preHandler = [check, ...(route.preHandler ? [route.preHandler].flat() : [])];
  });
}
