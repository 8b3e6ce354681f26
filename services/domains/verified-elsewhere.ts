import type { Tx } from '../shared/db.ts';

/** PostgreSQL's unique_violation: another organisation's verification of the same name committed first. */
const UNIQUE_VIOLATION = '23505';

/**
 * Records a domain as verified where a partial unique index lets only one organisation hold it verified
 * (payment_domains_verified_domain, customer_portals_verified_custom_domain). The write runs under a savepoint, so
 * losing a race to another organisation's verification leaves the transaction usable: the caller gets false and
 * records the check as failed instead.
 */
export async function claimVerified(tx: Tx, write: (sp: Tx) => Promise<unknown>): Promise<boolean> {
  try {
    await tx.savepoint((sp) => write(sp as Tx));
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === UNIQUE_VIOLATION) return false;
    throw err;
  }
}

export const verifiedElsewhereReason = (domain: string): string =>
  `${domain} is verified by another organisation; it can be verified here once that organisation removes it.`;
