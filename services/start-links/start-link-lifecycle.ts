import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The lifecycle of a start link's session (start_link_sessions.status, 026_start_links.sql):
 *
 *   (opened) → open → completed (on the page, final) | abandoned (on the page) | expired (the organisation's next
 *   call found it past expires_at and opens another one).
 *
 * An open session past its time is expired already for the page (`effectiveStartLinkStatus`); the column catches up
 * on the next call. The page finds a session by its token's hash, the API by its organisation and id; both are keys.
 */
export const START_LINK_STATUSES = ['open', 'completed', 'abandoned', 'expired'] as const;
export type StartLinkStatus = (typeof START_LINK_STATUSES)[number];

/** A new session's status (its INSERT). */
export const OPEN_START_LINK = 'open' as const satisfies StartLinkStatus;
export const COMPLETED_START_LINK = 'completed' as const satisfies StartLinkStatus;
export const EXPIRED_START_LINK = 'expired' as const satisfies StartLinkStatus;

/** The live session of an organisation and kind: at most one (a partial unique index). */
export const LIVE_START_LINK_STATUSES = ['open', 'completed'] as const satisfies readonly StartLinkStatus[];

export const START_LINK_TRANSITIONS = {
  complete: { from: ['open'], to: 'completed' },
  abandon: { from: ['open'], to: 'abandoned' },
  expire: { from: ['open'], to: 'expired' },
} as const;

/** Keyed by the token's hash: the pages know nothing else, and the API reads the hash with the session. */
export const START_LINK_LIFECYCLE = defineLifecycle({
  name: 'start link session',
  table: 'start_link_sessions',
  column: 'status',
  stateNoun: 'status',
  tenantColumn: null,
  idColumn: 'token_hash',
  touchColumn: null,
  states: START_LINK_STATUSES,
  transitions: START_LINK_TRANSITIONS,
});
