import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The verification of a domain the organisation names (payment_domains.status; the portal's custom domain,
 * customer_portals.custom_domain_status, has the same one: custom-domain-lifecycle.ts), 024_payment_domain_and_portal.sql:
 *
 *   none → unverified (a domain is set; a different one starts over) → verified | failed (the TXT look-up, or a
 *   refusal); verified | failed → verified | failed (a later check); any but none → none (the domain is cleared).
 *
 * A verified domain belongs to one organisation (a partial unique index over the verified state): the services find
 * the organisation by the Host header.
 */
export const DOMAIN_STATUSES = ['none', 'unverified', 'verified', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

/** Without a domain. */
export const NO_DOMAIN = 'none' as const satisfies DomainStatus;
/** The state the services find an organisation's domain in. */
export const VERIFIED_DOMAIN = 'verified' as const satisfies DomainStatus;

const NAMED = ['unverified', 'verified', 'failed'] as const satisfies readonly DomainStatus[];

export const DOMAIN_TRANSITIONS = {
  /** A (different) domain is set: unverified, no check recorded. */
  set: { from: DOMAIN_STATUSES, to: 'unverified' },
  /** The domain is cleared. */
  clear: { from: NAMED, to: 'none' },
  /** The TXT record holds the value and no other organisation holds the domain verified. */
  verify: { from: NAMED, to: 'verified' },
  /** The check failed, or the domain may not be used: `failure_reason` says why. */
  fail: { from: NAMED, to: 'failed' },
} as const;

export type DomainTransition = keyof typeof DOMAIN_TRANSITIONS;

/** The transition a PUT of `domain` makes: set or clear. */
export const domainChange = (domain: string | null): 'set' | 'clear' => (domain === null ? 'clear' : 'set');

export const PAYMENT_DOMAIN_LIFECYCLE = defineLifecycle({
  name: 'payment domain',
  table: 'payment_domains',
  column: 'status',
  stateNoun: 'status',
  tenantColumn: null,
  idColumn: 'organization_id',
  states: DOMAIN_STATUSES,
  transitions: DOMAIN_TRANSITIONS,
});
