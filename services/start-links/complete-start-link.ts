import type { Tx } from '../shared/db.ts';
import { VERIFICATION_LIFECYCLE } from '../organizations/verification-lifecycle.ts';
import { startLinkTokenHash, type StartLinkKind } from './start-link-kinds.ts';
import { START_LINK_LIFECYCLE } from './start-link-lifecycle.ts';

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
  const done = await START_LINK_LIFECYCLE.tryTransition(tx, hash, 'complete', {
    set: tx`completed_at = now(), token_enc = NULL`,
    where: tx`t.expires_at > business_now(t.organization_id)`,
    returning: 'organization_id, kind',
  });
  if (!done) return false;
  const { organization_id, kind } = done.row as { organization_id: string; kind: StartLinkKind };
  // From unverified or pending; verified already (a second verification kind cannot be completed) is left as it is.
  if (kind === 'verification') await VERIFICATION_LIFECYCLE.tryTransition(tx, organization_id, 'verify');
  return true;
}
