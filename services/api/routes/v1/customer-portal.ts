import type { FastifyInstance } from 'fastify';
import { Envelope } from '../../../../contracts/common.ts';
import { CustomerPortal, CustomerPortalPatch } from '../../../../contracts/customer-portal.ts';
import { createDnsChecks } from '../../../domains/dns-checks.ts';
import { serviceHostsOf } from '../../../domains/domain-settings.ts';
import { getCustomerPortal } from '../../../customer-portal/get-customer-portal.ts';
import { updateCustomerPortal } from '../../../customer-portal/update-customer-portal.ts';
import { verifyPortalDomain } from '../../../customer-portal/verify-portal-domain.ts';
import type { PortalAddresses } from '../../../customer-portal/portal-row.ts';
import { DEFAULT_PAY_PORT } from '../../../../services/shared/config.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const tags = ['Settings'];
/** PORTAL_CNAME_TARGET's default (services/shared/config.ts). */
const DEFAULT_CNAME_TARGET = 'portal.faktura.invalid';

export function customerPortalRoutes(app: FastifyInstance, deps: AppDeps): void {
  const checks = deps.domains?.checks ?? createDnsChecks();
  const cnameTarget = deps.domains?.portalCnameTarget ?? DEFAULT_CNAME_TARGET;
  const at: PortalAddresses = {
    payBaseUrl: deps.payBaseUrl ?? `http://127.0.0.1:${DEFAULT_PAY_PORT}`,
    portalBaseDomain: deps.domains?.portalBaseDomain,
  };
  const hosts = serviceHostsOf({ ...deps, payBaseUrl: at.payBaseUrl });

  app.get(
    '/customer-portal',
    {
      config: { scope: 'settings:read' },
      schema: {
        summary: "The customer portal's settings",
        description:
          'Defaults until changed: no subdomain, inactive, self-service off, no primary colour, palette `lys`, no custom domain. ' +
          '`url` is where the portal is served: the verified custom domain, else the subdomain\'s address (null without a subdomain).',
        tags,
        response: { 200: Envelope(CustomerPortal) },
      },
    },
    async (req) => ({ data: await deps.db.read((sql) => getCustomerPortal(sql, req.auth.organizationId, at)), meta: {} }),
  );

  app.patch<{ Body: CustomerPortalPatch }>(
    '/customer-portal',
    {
      config: { scope: 'settings:write' },
      schema: {
        summary: "Change the customer portal's settings",
        description:
          'Partial: only the fields sent change. A subdomain another organisation has: 409 subdomain_taken; a reserved one (www, api, ' +
          'pay, login, … and the service\'s own hosts under the portal\'s base domain): 422 subdomain_reserved. `active: true` without a ' +
          'subdomain (after the patch): 422 portal_subdomain_required. A custom domain that is not a DNS host name, is in an ' +
          'internal-only zone, is a host of the service or is under the portal\'s base domain: 422 invalid_domain; any organisation\'s ' +
          'payment domain: 409 domain_in_use; a different one is `unverified` until POST /v1/customer-portal/verify-domain (null removes it).',
        tags,
        body: CustomerPortalPatch,
        response: { 200: Envelope(CustomerPortal) },
      },
    },
    (req, reply) => mutate(deps, req, reply, async (tx) => ({ status: 200, data: await updateCustomerPortal(tx, req.auth.organizationId, req.body, at, hosts) })),
  );

  app.post(
    '/customer-portal/verify-domain',
    {
      config: { scope: 'settings:write' },
      schema: {
        summary: "Check the portal's custom domain now",
        description:
          'Looks the custom domain\'s CNAME up at once: `verified` when it points to the portal\'s host (PORTAL_CNAME_TARGET), else ' +
          '`failed` with `customDomainFailureReason`; also `failed` when the name is meanwhile a payment domain or a host of the ' +
          'service. No custom domain set: 422 portal_custom_domain_missing.',
        tags,
        response: { 200: Envelope(CustomerPortal) },
      },
    },
    async (req, reply) => mutate(deps, req, reply, await verifyPortalDomain({ db: deps.db, checks, cnameTarget, at, hosts }, req.auth.organizationId)),
  );
}
