import type { FastifyInstance } from 'fastify';
import { Envelope } from '../../../../contracts/common.ts';
import { PaymentDomain, PaymentDomainPut } from '../../../../contracts/payment-domain.ts';
import { createDnsChecks } from '../../../domains/dns-checks.ts';
import { serviceHostsOf } from '../../../domains/domain-settings.ts';
import { getPaymentDomain } from '../../../domains/get-payment-domain.ts';
import { setPaymentDomain } from '../../../domains/set-payment-domain.ts';
import { verifyPaymentDomain } from '../../../domains/verify-payment-domain.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const tags = ['Settings'];

export function paymentDomainRoutes(app: FastifyInstance, deps: AppDeps): void {
  const checks = deps.domains?.checks ?? createDnsChecks();
  const hosts = serviceHostsOf(deps);

  app.get(
    '/payment-domain',
    {
      config: { scope: 'settings:read' },
      schema: {
        summary: "The organisation's payment domain",
        description:
          'The domain payment links use once it is verified, its status (`none`, `unverified`, `verified`, `failed`) and the TXT ' +
          'record to publish at `_faktura-verify.<domain>` (`verification`, null without a domain).',
        tags,
        response: { 200: Envelope(PaymentDomain) },
      },
    },
    async (req) => ({ data: await deps.db.read((sql) => getPaymentDomain(sql, req.auth.organizationId)), meta: {} }),
  );

  app.put<{ Body: PaymentDomainPut }>(
    '/payment-domain',
    {
      config: { scope: 'settings:write' },
      schema: {
        summary: 'Set or clear the payment domain',
        description:
          'A different domain is `unverified` until POST /v1/payment-domain/verify finds its TXT record (payment links keep the pay ' +
          "service's address until then); null clears it (`none`); the domain the organisation already has changes nothing. Stored in " +
          'lower case. Not a DNS host name with at least one dot, a name in an internal-only zone (.internal, .local, .lan, …), a host ' +
          'of the service itself or a name under the portal\'s base domain: 422 invalid_domain. Any organisation\'s portal custom ' +
          'domain: 409 domain_in_use.',
        tags,
        body: PaymentDomainPut,
        response: { 200: Envelope(PaymentDomain) },
      },
    },
    (req, reply) => mutate(deps, req, reply, async (tx) => ({ status: 200, data: await setPaymentDomain(tx, req.auth.organizationId, req.body.domain, hosts) })),
  );

  app.post(
    '/payment-domain/verify',
    {
      config: { scope: 'settings:write' },
      schema: {
        summary: 'Check the payment domain now',
        description:
          'Looks the TXT record `_faktura-verify.<domain>` up at once: `verified` when one holds `verification.value`, else `failed` ' +
          'with `failureReason` (no record, another value, no such name, no answer). A domain another organisation has verified ' +
          'stays theirs (`failed`), as does a name that is meanwhile a portal\'s custom domain or a host of the service. No domain set: ' +
          '422 payment_domain_missing.',
        tags,
        response: { 200: Envelope(PaymentDomain) },
      },
    },
    async (req, reply) => mutate(deps, req, reply, await verifyPaymentDomain(deps.db, checks, req.auth.organizationId, hosts)),
  );
}
