import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The organisation's business identity verification (organizations.verification, 022_organization_verification.sql),
 * moved by the verification start link (services/start-links):
 *
 *   unverified → pending (a verification session is opened) → verified (completed on the page, final) |
 *   unverified (abandoned on the page).
 *
 * Payouts are held until the organisation is verified (services/settlements). The column has no updated_at of its
 * own to touch: the organisation's updated_at follows its settings, not this.
 */
export const VERIFICATION_STATES = ['unverified', 'pending', 'verified'] as const;
export type VerificationState = (typeof VERIFICATION_STATES)[number];

/** The state whose payouts are released. */
export const VERIFIED = 'verified' as const satisfies VerificationState;

export const VERIFICATION_TRANSITIONS = {
  /** A verification session was opened. */
  request: { from: ['unverified'], to: 'pending' },
  /** The session was completed. */
  verify: { from: ['unverified', 'pending'], to: 'verified' },
  /** The session was abandoned. */
  abandon: { from: ['pending'], to: 'unverified' },
} as const;

export const VERIFICATION_LIFECYCLE = defineLifecycle({
  name: 'organisation verification',
  table: 'organizations',
  column: 'verification',
  tenantColumn: null,
  touchColumn: null,
  states: VERIFICATION_STATES,
  transitions: VERIFICATION_TRANSITIONS,
});
