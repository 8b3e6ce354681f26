import type { PaymentDomain } from '../../contracts/payment-domain.ts';
import { randomBytesPooled } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import type { SqlFragment } from '../shared/lifecycle.ts';
import { NO_DOMAIN, PAYMENT_DOMAIN_LIFECYCLE, type DomainTransition } from './payment-domain-lifecycle.ts';

/** The organisation's row of payment_domains (migration 024); none means no domain was ever set. */
export interface PaymentDomainRow {
  domain: string | null;
  status: PaymentDomain['status'];
  verification_value: string;
  checked_at: Date | null;
  failure_reason: string | null;
}

export const VERIFICATION_PREFIX = '_faktura-verify';

export const verificationName = (domain: string): string => `${VERIFICATION_PREFIX}.${domain}`;

/** 128 random bits: another organisation cannot publish this organisation's value by guessing it. */
export const newVerificationValue = (): string => `faktura-verify=${randomBytesPooled(16).toString('hex')}`;

export async function findPaymentDomainRow(sql: Queryable, organizationId: string, opts: { forUpdate?: boolean } = {}): Promise<PaymentDomainRow | undefined> {
  const [row] = opts.forUpdate
    ? await sql<PaymentDomainRow[]>`
        SELECT domain, status, verification_value, checked_at, failure_reason FROM payment_domains
        WHERE organization_id = ${organizationId} FOR UPDATE`
    : await sql<PaymentDomainRow[]>`
        SELECT domain, status, verification_value, checked_at, failure_reason FROM payment_domains
        WHERE organization_id = ${organizationId}`;
  return row;
}

const ROW_COLUMNS = 'domain, verification_value, checked_at, failure_reason';

/**
 * Moves the organisation's payment domain along `transition` (the kit's guarded UPDATE, payment-domain-lifecycle.ts),
 * writing `set` with it, and answers the row as it is now. The caller holds the row's lock.
 */
export async function transitionPaymentDomain(
  sql: Queryable,
  organizationId: string,
  transition: DomainTransition,
  set: SqlFragment,
): Promise<PaymentDomainRow> {
  const moved = await PAYMENT_DOMAIN_LIFECYCLE.transition(sql, organizationId, transition, { set, returning: ROW_COLUMNS });
  return { ...(moved.row as Omit<PaymentDomainRow, 'status'>), status: moved.to };
}

export function toPaymentDomain(row: PaymentDomainRow | undefined): PaymentDomain {
  if (!row?.domain) return { domain: null, status: NO_DOMAIN, verification: null, checkedAt: null, failureReason: null };
  return {
    domain: row.domain,
    status: row.status,
    verification: { type: 'TXT', name: verificationName(row.domain), value: row.verification_value },
    checkedAt: row.checked_at?.toISOString() ?? null,
    failureReason: row.failure_reason,
  };
}
