import type { StartLinkSession } from '../../contracts/start-links.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Tx } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { VERIFICATION_LIFECYCLE } from '../organizations/verification-lifecycle.ts';
import { COMPLETED_START_LINK, LIVE_START_LINK_STATUSES, OPEN_START_LINK, START_LINK_LIFECYCLE } from './start-link-lifecycle.ts';
import { newStartLinkToken, START_LINK_KINDS, START_LINK_TTL_HOURS, startLinkTokenHash, startLinkUrl, type StartLinkKind } from './start-link-kinds.ts';

interface LiveRow {
  id: string;
  status: (typeof LIVE_START_LINK_STATUSES)[number];
  token_hash: Buffer;
  token_enc: Buffer | null;
  expires_at: Date;
  expired: boolean;
}

export interface OpenedStartLink {
  /** A new session was opened (201); otherwise the live one is reported (200). */
  created: boolean;
  session: StartLinkSession;
}

/**
 * POST /v1/verification-sessions, /v1/card-setup-sessions, /v1/accounting-connections: the organisation's session of
 * this kind. A completed one is reported with its final status and no link; an open one that has not expired is
 * reported as it is (the same id and link); otherwise (none yet, or the last one abandoned or expired) a new one is
 * opened. Opening a verification session makes the organisation's verification `pending`.
 *
 * Concurrent calls (different idempotency keys) are serialised on (organisation, kind), so that concurrent first
 * calls open one session: the second waits for the first to commit, then finds its session and reports it. The
 * partial unique index on the live session is the backstop.
 */
export async function openStartLink(tx: Tx, keyring: Keyring, organizationId: string, kind: StartLinkKind, payBaseUrl: string): Promise<OpenedStartLink> {
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`start-links:${organizationId}:${kind}`}, 0))`;
  const [live] = await tx<LiveRow[]>`
    SELECT id, status, token_hash, token_enc, expires_at, expires_at <= business_now(organization_id) AS expired
    FROM start_link_sessions
    WHERE organization_id = ${organizationId} AND kind = ${kind} AND status IN ${START_LINK_LIFECYCLE.in(tx, LIVE_START_LINK_STATUSES)}`;
  if (live && (live.status === COMPLETED_START_LINK || !live.expired)) {
    return { created: false, session: toSession(keyring, kind, payBaseUrl, live) };
  }
  if (live) {
    // Past its time: it leaves the live index so the new one can take its place. Its link already shows "expired".
    await START_LINK_LIFECYCLE.transition(tx, live.token_hash, 'expire', { set: tx`ended_at = now(), token_enc = NULL` });
  }
  const token = newStartLinkToken();
  const [row] = await tx<LiveRow[]>`
    INSERT INTO start_link_sessions (organization_id, id, kind, status, token_hash, token_enc, expires_at)
    VALUES (${organizationId}, ${uuidv7()}, ${kind}, ${OPEN_START_LINK}, ${startLinkTokenHash(token)!}, ${keyring.encrypt(token)},
            business_now(${organizationId}) + make_interval(hours => ${START_LINK_TTL_HOURS}))
    RETURNING id, status, token_hash, token_enc, expires_at, false AS expired`;
  if (kind === 'verification') {
    // A verified organisation never gets here (its completed session is reported above).
    await VERIFICATION_LIFECYCLE.tryTransition(tx, organizationId, 'request');
  }
  return { created: true, session: toSession(keyring, kind, payBaseUrl, row!) };
}

function toSession(keyring: Keyring, kind: StartLinkKind, payBaseUrl: string, row: LiveRow): StartLinkSession {
  if (row.status === COMPLETED_START_LINK) return { id: row.id, url: null, status: START_LINK_KINDS[kind].finalStatus, expiresAt: null };
  return {
    id: row.id,
    url: startLinkUrl(payBaseUrl, kind, keyring.decrypt(row.token_enc!)),
    status: 'pending',
    expiresAt: row.expires_at.toISOString(),
  };
}
