import type { Tx } from '../shared/db.ts';
import { startLinkTokenHash, type StartLinkKind } from './start-link-kinds.ts';

/**
 * A person abandoned the step on the link's page: the session ends without effect and the organisation's next call
 * opens a new one. An abandoned verification takes the organisation back from `pending` to `unverified`. Only an
 * open session within its time is abandoned; answers whether this call did it.
 */
export async function abandonStartLink(tx: Tx, token: string): Promise<boolean> {
  const hash = startLinkTokenHash(token);
  if (!hash) return false;
  const [ended] = await tx<{ organization_id: string; kind: StartLinkKind }[]>`
    UPDATE start_link_sessions SET status = 'abandoned', ended_at = now(), token_enc = NULL
    WHERE token_hash = ${hash} AND status = 'open' AND expires_at > business_now(organization_id)
    RETURNING organization_id, kind`;
  if (!ended) return false;
  if (ended.kind === 'verification') {
    await tx`UPDATE organizations SET verification = 'unverified' WHERE id = ${ended.organization_id} AND verification = 'pending'`;
  }
  return true;
}
