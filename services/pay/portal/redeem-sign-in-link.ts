import type { Queryable } from '../../shared/db.ts';
import { newPortalToken, portalTokenHash } from './portal-tokens.ts';

/** How long a portal session lasts from sign-in (absolute: it is not extended by use). */
export const SESSION_HOURS = 8;

/**
 * Whether a mailed link can still be redeemed (the confirmation page asks before it is used: mail scanners that
 * open links must not spend them).
 */
export async function signInLinkIsValid(sql: Queryable, organizationId: string, token: string): Promise<boolean> {
  const hash = portalTokenHash(token);
  if (!hash) return false;
  const [row] = await sql`
    SELECT 1 FROM portal_sign_in_links
    WHERE token_sha256 = ${hash} AND organization_id = ${organizationId} AND used_at IS NULL AND expires_at > now()`;
  return row !== undefined;
}

/**
 * Redeems a sign-in link: marks it used (one-time: of two redemptions at once only one updates the row) and opens a
 * session for the address the link was sent to. Undefined when the link is unknown, of another organisation's
 * portal, used or expired.
 */
export async function redeemSignInLink(sql: Queryable, organizationId: string, token: string): Promise<{ sessionToken: string } | undefined> {
  const hash = portalTokenHash(token);
  if (!hash) return undefined;
  const [link] = await sql<{ email_bidx: Buffer }[]>`
    UPDATE portal_sign_in_links SET used_at = now()
    WHERE token_sha256 = ${hash} AND organization_id = ${organizationId} AND used_at IS NULL AND expires_at > now()
    RETURNING email_bidx`;
  if (!link) return undefined;
  const sessionToken = newPortalToken();
  await sql`
    INSERT INTO portal_sessions (token_sha256, organization_id, email_bidx, expires_at)
    VALUES (${portalTokenHash(sessionToken)!}, ${organizationId}, ${link.email_bidx}, now() + make_interval(hours => ${SESSION_HOURS}))`;
  await sql`DELETE FROM portal_sessions WHERE organization_id = ${organizationId} AND expires_at < now() - interval '1 day'`;
  return { sessionToken };
}
