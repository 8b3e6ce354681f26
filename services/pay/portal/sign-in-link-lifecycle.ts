import { defineLifecycle } from '../../shared/lifecycle.ts';

/**
 * What became of a portal sign-in link's mail (portal_sign_in_links.mail_outcome, 027_customer_portal_sessions.sql).
 * The column is NULL while the PortalSignInMail workflow has not finished; it then records one outcome, once:
 *
 *   (no outcome) → mailed | expired (the link ran out first) | no_recipient | refused (by the server) | failed (after
 *   retries).
 *
 * The outcomes are final; the workflow writes one with `mail_outcome IS NULL` as its guard, so a retried step
 * changes nothing.
 */
export const SIGN_IN_MAIL_OUTCOMES = ['mailed', 'expired', 'no_recipient', 'refused', 'failed'] as const;
export type SignInMailOutcome = (typeof SIGN_IN_MAIL_OUTCOMES)[number];

/** The outcome of a mail that went out. */
export const MAILED = 'mailed' as const satisfies SignInMailOutcome;

export const SIGN_IN_LINK_LIFECYCLE = defineLifecycle({
  name: 'portal sign-in mail',
  table: 'portal_sign_in_links',
  column: 'mail_outcome',
  tenantColumn: null,
  touchColumn: null,
  states: SIGN_IN_MAIL_OUTCOMES,
  // Every outcome is final, and the first one is written over NULL, which no from-list can name: no transitions.
  transitions: {},
});
