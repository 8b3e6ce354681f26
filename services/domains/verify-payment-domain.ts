import type { PaymentDomain } from '../../contracts/payment-domain.ts';
import type { Db, Tx } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import type { CheckOutcome, DnsChecks } from './dns-checks.ts';
import { domainRefusal, type ServiceHosts } from './domain-use.ts';
import { findPaymentDomainRow, toPaymentDomain, transitionPaymentDomain, verificationName, type PaymentDomainRow } from './payment-domain-row.ts';
import { claimVerified, verifiedElsewhereReason } from './verified-elsewhere.ts';

/**
 * POST /v1/payment-domain/verify in two steps, so that no transaction stays open while DNS answers (up to a few
 * seconds): `checkPaymentDomain` reads the domain and looks its TXT record up, then `recordPaymentDomainCheck` writes
 * the outcome in the request's transaction.
 */
export interface PaymentDomainCheck {
  /** The domain that was checked; null when none was set. */
  domain: string | null;
  outcome: CheckOutcome | undefined;
  checkedAt: Date;
}

/** Step 1, outside any transaction: the live TXT look-up of `_faktura-verify.<domain>`. */
export async function checkPaymentDomain(db: Db, checks: DnsChecks, organizationId: string): Promise<PaymentDomainCheck> {
  const row = await db.read((sql) => findPaymentDomainRow(sql, organizationId));
  if (!row?.domain) return { domain: null, outcome: undefined, checkedAt: new Date() };
  const outcome = await checks.txtHolds(verificationName(row.domain), row.verification_value);
  return { domain: row.domain, outcome, checkedAt: new Date() };
}

/**
 * Step 2: `verified` when the record holds the value, else `failed` with the reason. A domain another organisation
 * holds verified stays that organisation's (the pay service finds the organisation by its Host): the check is then
 * `failed` and says so. A domain that may not be a payment domain (domain-use.ts: a portal's custom domain, set
 * meanwhile by another organisation, a service host, a name under PORTAL_BASE_DOMAIN) is `failed` with that reason,
 * whatever DNS says. When the domain was changed while DNS answered, the outcome concerns a domain the organisation
 * no longer has, so nothing is recorded and the current state is the answer.
 */
export async function recordPaymentDomainCheck(tx: Tx, organizationId: string, check: PaymentDomainCheck, hosts: ServiceHosts): Promise<PaymentDomain> {
  const row = await findPaymentDomainRow(tx, organizationId, { forUpdate: true });
  if (!row?.domain) {
    throw new DomainError('payment_domain_missing', 'There is no payment domain to verify; set one with PUT /v1/payment-domain first.');
  }
  if (row.domain !== check.domain || !check.outcome) return toPaymentDomain(row);
  const domain = row.domain;
  const record = (sql: Tx, outcome: 'verify' | 'fail', reason: string | null): Promise<PaymentDomainRow> =>
    transitionPaymentDomain(sql, organizationId, outcome, sql`checked_at = ${check.checkedAt}, failure_reason = ${reason}`);

  const refusal = await domainRefusal(tx, domain, 'payment', hosts);
  if (refusal) {
    const failed = await record(tx, 'fail', refusal.reason);
    return toPaymentDomain(failed);
  }
  if (check.outcome.ok) {
    let verified: PaymentDomainRow | undefined;
    const claimed = await claimVerified(tx, async (sp) => {
      verified = await record(sp, 'verify', null);
    });
    if (claimed) return toPaymentDomain(verified);
    const failed = await record(tx, 'fail', verifiedElsewhereReason(domain));
    return toPaymentDomain(failed);
  }
  const failed = await record(tx, 'fail', check.outcome.reason);
  return toPaymentDomain(failed);
}

/** The two steps as the request runs them: the look-up now, before the transaction opens; its record in the mutation. */
export async function verifyPaymentDomain(db: Db, checks: DnsChecks, organizationId: string, hosts: ServiceHosts): Promise<MutationUseCase> {
  const check = await checkPaymentDomain(db, checks, organizationId);
  return async (tx) => ({ status: 200, data: await recordPaymentDomainCheck(tx, organizationId, check, hosts) });
}
