import type { Scope } from '../../contracts/scopes.ts';
import type { Plan } from '../organizations/plans.ts';

/** Who is calling: resolved from the bearer key by the auth hook, read by every route. */
export interface AuthContext {
  organizationId: string;
  keyId: string;
  scopes: ReadonlySet<string>;
  sandbox: boolean;
  plan: Plan;
}

export type RateClass = 'default' | 'document';

/** Per-route settings, declared next to each route as `config`. */
export interface RouteSettings {
  /**
   * The scope the operation requires (the OpenAPI document names it per operation). Routes without one are public
   * (health, docs).
   */
  scope?: Scope;
  /** Authenticated without a scope of its own: the route checks scopes itself (POST /v1/batch, per operation). */
  scopesPerOperation?: boolean;
  /** The plan the route needs (403 plan_required otherwise), checked right after authentication, before the scope. */
  plan?: Plan;
  rateClass?: RateClass;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
    idempotencyKey: string | undefined;
  }
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging adds our settings
  interface FastifyContextConfig extends RouteSettings {}
}
