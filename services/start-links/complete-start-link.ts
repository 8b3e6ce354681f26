import type { Tx } from '../shared/db.ts';
import { startLinkTokenHash, type StartLinkKind } from './start-link-kinds.ts';

/**
 * A person completed the step on the link's page. Only an open session within its time is completed; it is final.
 * A verification session makes the organisation `verified` (payouts are no longer held). Answers whether this call
 * completed it; anything else (already completed, abandoned, expired, unknown) changes nothing, and the page shows
 * the session as it stands.
 */
export async function completeStartLink(tx: Tx, token: string): Promise<boolean> {
  const hash = startLinkTokenHash(token);
  if (!hash) return false;
  // The row lock orders this against an abandon of the same link and against the next call's expiry: whichever
  // commits first wins, and the other finds the session no longer open.
  const [done] = await tx<{ organization_id: string; kind: StartLinkKind }[]>`
    UPDATE start_link_sessions SET status = 'completed', completed_at = now(), token_enc = NULL
    WHERE token_hash = ${hash} AND status = 'open' AND expires_at > business_now(organization_id)
    RETURNING organization_id, kind`;
  if (!done) return false;
  if (done.kind === 'verification') await tx`UPDATE organizations SET verification = 'verified' WHERE id = ${done.organization_id}`;
  return true;
}
