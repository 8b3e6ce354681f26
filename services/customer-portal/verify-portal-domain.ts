import type { CustomerPortal } from '../../contracts/customer-portal.ts';
import type { Db, Tx } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import type { CheckOutcome, DnsChecks } from '../domains/dns-checks.ts';
import { domainRefusal, type ServiceHosts } from '../domains/domain-use.ts';
import { claimVerified, verifiedElsewhereReason } from '../domains/verified-elsewhere.ts';
import { findPortalRow, toCustomerPortal, transitionCustomDomain, type PortalAddresses, type PortalRow } from './portal-row.ts';

/**
 * POST /v1/customer-portal/verify-domain in two steps, so that no transaction stays open while DNS answers:
 * `checkPortalDomain` looks the custom domain's CNAME up, `recordPortalDomainCheck` writes the outcome in the
 * request's transaction (the payment domain's check works the same way).
 */
export interface PortalDomainCheck {
  customDomain: string | null;
  outcome: CheckOutcome | undefined;
  checkedAt: Date;
}

/** Step 1, outside any transaction: is the custom domain a CNAME to PORTAL_CNAME_TARGET? */
export async function checkPortalDomain(db: Db, checks: DnsChecks, organizationId: string, cnameTarget: string): Promise<PortalDomainCheck> {
  const row = await db.read((sql) => findPortalRow(sql, organizationId));
  if (!row?.custom_domain) return { customDomain: null, outcome: undefined, checkedAt: new Date() };
  return { customDomain: row.custom_domain, outcome: await checks.cnameTo(row.custom_domain, cnameTarget), checkedAt: new Date() };
}

/**
 * Step 2: `verified` or `failed` with the reason. A custom domain another organisation's portal holds verified stays
 * theirs (the check is `failed` and says so). A name that may not be a portal's custom domain (domain-use.ts: any
 * organisation's payment domain, set meanwhile, a service host, a name under PORTAL_BASE_DOMAIN) is `failed` with
 * that reason, whatever DNS says. Changed while DNS answered: nothing is recorded, the current state is the answer.
 */
export async function recordPortalDomainCheck(
  tx: Tx, organizationId: string, check: PortalDomainCheck, at: PortalAddresses, hosts: ServiceHosts,
): Promise<CustomerPortal> {
  const row = await findPortalRow(tx, organizationId, { forUpdate: true });
  if (!row?.custom_domain) {
    throw new DomainError('portal_custom_domain_missing', 'The portal has no custom domain to verify; set `customDomain` with PATCH /v1/customer-portal first.');
  }
  if (row.custom_domain !== check.customDomain || !check.outcome) return toCustomerPortal(row, at);
  const domain = row.custom_domain;
  const record = (sql: Tx, outcome: 'verify' | 'fail', reason: string | null): Promise<PortalRow> =>
    transitionCustomDomain(sql, organizationId, outcome, sql`custom_domain_checked_at = ${check.checkedAt}, custom_domain_failure = ${reason}`);

  const refusal = await domainRefusal(tx, domain, 'portal', hosts);
  if (refusal) {
    const failed = await record(tx, 'fail', refusal.reason);
    return toCustomerPortal(failed, at);
  }
  if (check.outcome.ok) {
    let verified: PortalRow | undefined;
    if (await claimVerified(tx, async (sp) => void (verified = await record(sp, 'verify', null)))) return toCustomerPortal(verified, at);
    const failed = await record(tx, 'fail', verifiedElsewhereReason(domain));
    return toCustomerPortal(failed, at);
  }
  const failed = await record(tx, 'fail', check.outcome.reason);
  return toCustomerPortal(failed, at);
}

/** The two steps as the request runs them: the look-up now, before the transaction opens; its record in the mutation. */
export async function verifyPortalDomain(
  deps: { db: Db; checks: DnsChecks; cnameTarget: string; at: PortalAddresses; hosts: ServiceHosts },
  organizationId: string,
): Promise<MutationUseCase> {
  const check = await checkPortalDomain(deps.db, deps.checks, organizationId, deps.cnameTarget);
  return async (tx) => ({ status: 200, data: await recordPortalDomainCheck(tx, organizationId, check, deps.at, deps.hosts) });
}
