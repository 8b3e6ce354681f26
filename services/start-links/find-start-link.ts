import type { Queryable } from '../shared/db.ts';
import { startLinkTokenHash, type StartLinkKind } from './start-link-kinds.ts';
import { EXPIRED_START_LINK, OPEN_START_LINK, START_LINK_LIFECYCLE, type StartLinkStatus } from './start-link-lifecycle.ts';

/** What a start link's page shows: the step, for whom, and where it stands. */
export interface StartLinkView {
  kind: StartLinkKind;
  organizationName: string;
  cvr: string | null;
  /** `expired` also for an open session past its time that no call has marked yet. */
  state: StartLinkStatus;
}

/** The session a link's token opens, or undefined for a token that opens none. */
export async function findStartLink(sql: Queryable, token: string): Promise<StartLinkView | undefined> {
  const hash = startLinkTokenHash(token);
  if (!hash) return undefined;
  const [row] = await sql<{ kind: StartLinkKind; name: string; cvr: string | null; state: StartLinkView['state'] }[]>`
    SELECT s.kind, o.name, o.cvr,
           CASE WHEN s.status IN ${START_LINK_LIFECYCLE.in(sql, [OPEN_START_LINK])} AND s.expires_at <= business_now(s.organization_id)
                THEN ${EXPIRED_START_LINK}::text ELSE s.status END AS state
    FROM start_link_sessions s JOIN organizations o ON o.id = s.organization_id
    WHERE s.token_hash = ${hash}`;
  return row ? { kind: row.kind, organizationName: row.name, cvr: row.cvr, state: row.state } : undefined;
}
