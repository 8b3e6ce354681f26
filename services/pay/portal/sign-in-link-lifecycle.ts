import { defineLifecycle } from '../../shared/lifecycle.ts';

/**
 * What became of a portal sign-in link's mail (portal_sign_in_links.mail_outcome, 027_customer_portal_sessions.sql).
 * The column is NULL while the PortalSignInMail workflow has not finished; it then records one outcome, once:
 *
 *   (no outcome) → mailed | expired (the link ran out first) | no_recipient | refused (by the server) | failed (after
 *   retries).
 *
 * The outcomes are final: each is a transition from no outcome (`fromUnset`), so a retried step changes nothing.
 */
export const SIGN_IN_MAIL_OUTCOMES = ['mailed', 'expired', 'no_recipient', 'refused', 'failed'] as const;
export type SignInMailOutcome = (typeof SIGN_IN_MAIL_OUTCOMES)[number];

export const SIGN_IN_MAIL_TRANSITIONS = {
  mail: { from: [], fromUnset: true, to: 'mailed' },
  expire: { from: [], fromUnset: true, to: 'expired' },
  noRecipient: { from: [], fromUnset: true, to: 'no_recipient' },
  refuse: { from: [], fromUnset: true, to: 'refused' },
  fail: { from: [], fromUnset: true, to: 'failed' },
} as const;

/** The transition that records `outcome`. */
export const recordOutcome = (outcome: SignInMailOutcome): keyof typeof SIGN_IN_MAIL_TRANSITIONS =>
  (Object.keys(SIGN_IN_MAIL_TRANSITIONS) as (keyof typeof SIGN_IN_MAIL_TRANSITIONS)[]).find((t) => SIGN_IN_MAIL_TRANSITIONS[t].to === outcome)!;

export const SIGN_IN_LINK_LIFECYCLE = defineLifecycle({
  name: 'portal sign-in mail',
  table: 'portal_sign_in_links',
  column: 'mail_outcome',
  tenantColumn: null,
  touchColumn: null,
  states: SIGN_IN_MAIL_OUTCOMES,
  transitions: SIGN_IN_MAIL_TRANSITIONS,
});
