import type { Tx } from '../shared/db.ts';
import { VERIFICATION_LIFECYCLE } from '../organizations/verification-lifecycle.ts';
import { startLinkTokenHash, type StartLinkKind } from './start-link-kinds.ts';
import { START_LINK_LIFECYCLE } from './start-link-lifecycle.ts';

/**
 * A person abandoned the step on the link's page: the session ends without effect and the organisation's next call
 * opens a new one. An abandoned verification takes the organisation back from `pending` to `unverified`. Only an
 * open session within its time is abandoned; answers whether this call did it.
 */
export async function abandonStartLink(tx: Tx, token: string): Promise<boolean> {
  const hash = startLinkTokenHash(token);
  if (!hash) return false;
  const ended = await START_LINK_LIFECYCLE.tryTransition(tx, hash, 'abandon', {
    set: tx`ended_at = now(), token_enc = NULL`,
    where: tx`t.expires_at > business_now(t.organization_id)`,
    returning: 'organization_id, kind',
  });
  if (!ended) return false;
  const { organization_id, kind } = ended.row as { organization_id: string; kind: StartLinkKind };
  if (kind === 'verification') await VERIFICATION_LIFECYCLE.tryTransition(tx, organization_id, 'abandon');
  return true;
}
