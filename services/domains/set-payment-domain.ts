import type { PaymentDomain } from '../../contracts/payment-domain.ts';
import type { Tx } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { domainRefusal, refusalError, type ServiceHosts } from './domain-use.ts';
import { normalizeHostName } from './host-name.ts';
import { domainChange } from './payment-domain-lifecycle.ts';
import { findPaymentDomainRow, newVerificationValue, toPaymentDomain, transitionPaymentDomain } from './payment-domain-row.ts';

/**
 * PUT /v1/payment-domain: sets the domain (stored in lower case) or clears it (null). A different domain starts
 * over as `unverified`, with no check recorded; clearing it is `none`. The domain the organisation already has (in
 * any case) changes nothing, so a repeated PUT does not undo a verification. The verification value is the
 * organisation's and survives every change: the integrator publishes one value, whatever the domain. A different
 * domain must also be free for this use (domain-use.ts): not the services' own hosts, not under PORTAL_BASE_DOMAIN,
 * not in an internal-only zone (422 invalid_domain), not any organisation's portal custom domain (409 domain_in_use).
 */
export async function setPaymentDomain(tx: Tx, organizationId: string, input: string | null, hosts: ServiceHosts): Promise<PaymentDomain> {
  let domain: string | null = null;
  if (input !== null) {
    const name = normalizeHostName(input);
    if (!name) {
      throw new DomainError('invalid_domain', 'The domain must be a DNS host name with at least one dot, such as betal.example.dk.', {
        details: [{ path: '/domain', message: 'must be a DNS host name with at least one dot' }],
      });
    }
    domain = name;
  }
  // The row is created on the first PUT (with the organisation's value) and locked against a concurrent verify.
  await tx`
    INSERT INTO payment_domains (organization_id, verification_value) VALUES (${organizationId}, ${newVerificationValue()})
    ON CONFLICT (organization_id) DO NOTHING`;
  const current = (await findPaymentDomainRow(tx, organizationId, { forUpdate: true }))!;
  if (current.domain === domain) return toPaymentDomain(current);
  if (domain !== null) {
    const refusal = await domainRefusal(tx, domain, 'payment', hosts);
    if (refusal) throw refusalError(refusal, '/domain');
  }
  const row = await transitionPaymentDomain(tx, organizationId, domainChange(domain), tx`domain = ${domain}, checked_at = NULL, failure_reason = NULL`);
  return toPaymentDomain(row);
}
