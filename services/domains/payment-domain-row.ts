import type { PaymentDomain } from '../../contracts/payment-domain.ts';
import { randomBytesPooled } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';

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

export function toPaymentDomain(row: PaymentDomainRow | undefined): PaymentDomain {
  if (!row?.domain) return { domain: null, status: 'none', verification: null, checkedAt: null, failureReason: null };
  return {
    domain: row.domain,
    status: row.status,
    verification: { type: 'TXT', name: verificationName(row.domain), value: row.verification_value },
    checkedAt: row.checked_at?.toISOString() ?? null,
    failureReason: row.failure_reason,
  };
}
