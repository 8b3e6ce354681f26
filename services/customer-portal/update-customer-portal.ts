import type { CustomerPortal, CustomerPortalPatch } from '../../contracts/customer-portal.ts';
import type { Tx } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { domainRefusal, refusalError, type ServiceHosts } from '../domains/domain-use.ts';
import { normalizeHostName } from '../domains/host-name.ts';
import { domainChange } from '../domains/payment-domain-lifecycle.ts';
import { findPortalRow, toCustomerPortal, transitionCustomDomain, type PortalAddresses, type PortalRow } from './portal-row.ts';
import { isReservedSubdomain } from './reserved-subdomains.ts';

const subdomainTaken = () =>
  new DomainError('subdomain_taken', "Another organisation's portal has that subdomain; choose another.", {
    details: [{ path: '/subdomain', message: 'is taken' }],
  });

/**
 * PATCH /v1/customer-portal: only the fields sent change. A subdomain is one organisation's at a time, active or not
 * (409 subdomain_taken, also when two organisations ask for it at once: the unique constraint decides). The portal
 * can be active only with a subdomain, judged after the patch (422 portal_subdomain_required). A different custom
 * domain starts over as `unverified` (none when removed); the one the portal already has changes nothing. A new
 * subdomain must not be reserved (422 subdomain_reserved, reserved-subdomains.ts); a new custom domain must be free
 * for this use (domain-use.ts: 422 invalid_domain for the services' own names and internal zones, 409 domain_in_use
 * for any organisation's payment domain).
 */
export async function updateCustomerPortal(
  tx: Tx, organizationId: string, patch: CustomerPortalPatch, at: PortalAddresses, hosts: ServiceHosts,
): Promise<CustomerPortal> {
  let customDomain: string | null | undefined = patch.customDomain;
  if (typeof patch.customDomain === 'string') {
    customDomain = normalizeHostName(patch.customDomain);
    if (!customDomain) {
      throw new DomainError('invalid_domain', 'The custom domain must be a DNS host name with at least one dot, such as kunde.example.dk.', {
        details: [{ path: '/customDomain', message: 'must be a DNS host name with at least one dot' }],
      });
    }
  }

  await tx`INSERT INTO customer_portals (organization_id) VALUES (${organizationId}) ON CONFLICT (organization_id) DO NOTHING`;
  const current = (await findPortalRow(tx, organizationId, { forUpdate: true }))!;
  const next: PortalRow = {
    ...current,
    ...(patch.subdomain !== undefined ? { subdomain: patch.subdomain } : {}),
    ...(patch.active !== undefined ? { active: patch.active } : {}),
    ...(patch.subscriptionSelfService !== undefined ? { subscription_self_service: patch.subscriptionSelfService } : {}),
    ...(patch.primaryColor !== undefined ? { primary_color: patch.primaryColor } : {}),
    ...(patch.palette !== undefined ? { palette: patch.palette } : {}),
  };
  const domainChanged = customDomain !== undefined && customDomain !== current.custom_domain;
  if (customDomain !== undefined && customDomain !== current.custom_domain) {
    if (customDomain !== null) {
      const refusal = await domainRefusal(tx, customDomain, 'portal', hosts);
      if (refusal) throw refusalError(refusal, '/customDomain');
    }
    Object.assign(next, { custom_domain: customDomain, custom_domain_checked_at: null, custom_domain_failure: null });
  }
  if (next.active && next.subdomain === null) {
    throw new DomainError('portal_subdomain_required', 'A portal can be active only with a subdomain; set `subdomain` too.', {
      details: [{ path: '/active', message: 'needs a subdomain' }],
    });
  }
  if (next.subdomain !== null && next.subdomain !== current.subdomain) {
    if (isReservedSubdomain(next.subdomain, hosts)) {
      throw new DomainError('subdomain_reserved', 'That subdomain is reserved for the service\'s own addresses; choose another.', {
        details: [{ path: '/subdomain', message: 'is reserved' }],
      });
    }
    const [holder] = await tx`SELECT 1 FROM customer_portals WHERE subdomain = ${next.subdomain} AND organization_id <> ${organizationId}`;
    if (holder) throw subdomainTaken();
  }

  let row: PortalRow | undefined;
  try {
    const columns = tx`
      subdomain = ${next.subdomain}, active = ${next.active}, subscription_self_service = ${next.subscription_self_service},
      primary_color = ${next.primary_color}, palette = ${next.palette}, custom_domain = ${next.custom_domain},
      custom_domain_checked_at = ${next.custom_domain_checked_at}, custom_domain_failure = ${next.custom_domain_failure}`;
    // A new custom domain (or none) moves its verification through the lifecycle, in the same statement.
    [row] = domainChanged
      ? [await transitionCustomDomain(tx, organizationId, domainChange(next.custom_domain), columns)]
      : await tx<PortalRow[]>`
          UPDATE customer_portals SET ${columns}, updated_at = now()
          WHERE organization_id = ${organizationId}
          RETURNING subdomain, active, subscription_self_service, primary_color, palette, custom_domain, custom_domain_status,
                    custom_domain_checked_at, custom_domain_failure`;
  } catch (err) {
    // Another organisation took the subdomain after the look above and committed first.
    if ((err as { code?: string; constraint_name?: string }).code === '23505' && (err as { constraint_name?: string }).constraint_name === 'customer_portals_subdomain_key') {
      throw subdomainTaken();
    }
    throw err;
  }
  return toCustomerPortal(row, at);
}
