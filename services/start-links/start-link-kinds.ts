import { randomBytesPooled, sha256 } from '../shared/crypto.ts';

/**
 * The three start links (docs/api-conventions.md, "Start links"): steps of an organisation's setup that a person
 * completes on a hosted page rather than an integrator through the API. Each kind has the final status its session
 * reports once completed, and the path of its page on the pay service (pages of the `test` provider).
 */
export type StartLinkKind = 'verification' | 'card_setup' | 'accounting_connection';

export const START_LINK_KINDS = {
  verification: { finalStatus: 'verified', pagePath: 'verification' },
  card_setup: { finalStatus: 'ready', pagePath: 'card-setup' },
  accounting_connection: { finalStatus: 'connected', pagePath: 'accounting-connection' },
} as const satisfies Record<StartLinkKind, { finalStatus: string; pagePath: string }>;

/** How long a link works after it was opened, on the organisation's clock (a sandbox's test clock). */
export const START_LINK_TTL_HOURS = 24;

/** Where a kind's pages are mounted on the pay service. */
export const startLinkPagePrefix = (kind: StartLinkKind): string => `/test-provider/${START_LINK_KINDS[kind].pagePath}`;

export const startLinkUrl = (payBaseUrl: string, kind: StartLinkKind, token: string): string =>
  `${payBaseUrl.replace(/\/+$/, '')}${startLinkPagePrefix(kind)}/${token}`;

/** A new link token: 256 random bits as 43 base64url characters. It is the only thing that opens the page. */
export const newStartLinkToken = (): string => randomBytesPooled(32).toString('base64url');

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/**
 * What the database keeps to find a link by its token: its SHA-256 (no key needed; 256 random bits need no slow
 * hash). Undefined for text that cannot be a token, which then costs no query.
 */
export const startLinkTokenHash = (token: string): Buffer | undefined => (TOKEN_RE.test(token) ? sha256(token) : undefined);
