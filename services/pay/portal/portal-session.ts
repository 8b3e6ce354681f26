import type { Queryable } from '../../shared/db.ts';
import type { Language } from '../texts.ts';
import { portalTokenHash } from './portal-tokens.ts';

export interface PortalCustomer {
  id: string;
  name: string;
  language: Language | null;
}

/** A signed-in debtor: the session and the organisation's customers it may see. */
export interface PortalSession {
  hash: Buffer;
  customers: PortalCustomer[];
}

/**
 * The session a cookie names, within this organisation's portal, with the customers whose e-mail address is the one
 * the link went to (read now: a customer whose address changed is no longer reachable). Undefined when the session
 * is unknown, another organisation's, expired, ended, or no customer has the address any more.
 */
export async function loadPortalSession(sql: Queryable, organizationId: string, token: string | undefined): Promise<PortalSession | undefined> {
  const hash = token === undefined ? undefined : portalTokenHash(token);
  if (!hash) return undefined;
  const customers = await sql<PortalCustomer[]>`
    SELECT c.id, c.name, c.language
    FROM portal_sessions s
    JOIN customers c ON c.organization_id = s.organization_id AND c.email_bidx = s.email_bidx
    WHERE s.token_sha256 = ${hash} AND s.organization_id = ${organizationId} AND s.ended_at IS NULL AND s.expires_at > now()
    ORDER BY c.created_at, c.id`;
  if (customers.length === 0) return undefined;
  return { hash, customers };
}

/** Signing out ends the session for good. */
export async function endPortalSession(sql: Queryable, organizationId: string, hash: Buffer): Promise<void> {
  await sql`UPDATE portal_sessions SET ended_at = now() WHERE token_sha256 = ${hash} AND organization_id = ${organizationId} AND ended_at IS NULL`;
}
