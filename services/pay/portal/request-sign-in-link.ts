import { WORK } from '../../../contracts/workflows.ts';
import { scheduleWake } from '../../clock/wake-index.ts';
import type { Keyring } from '../../shared/crypto.ts';
import type { Queryable } from '../../shared/db.ts';
import { uuidv7 } from '../../shared/ids.ts';
import { emailIndex } from '../../customers/customer-queries.ts';
import type { Language } from '../texts.ts';
import { newPortalToken, portalTokenHash } from './portal-tokens.ts';

export interface SignInLimits {
  /** Link requests per e-mail address (as typed, in lower case) within the window. */
  perAddress: number;
  /** Link requests per client address within the window. */
  perClient: number;
  windowSeconds: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { perAddress: 5, perClient: 10, windowSeconds: 15 * 60 };

/** How long a mailed link can be redeemed. */
export const SIGN_IN_LINK_MINUTES = 15;

export type SignInRequest =
  | { kind: 'limited'; retryAfterSeconds: number }
  /**
   * Granted: `linkId` when the address belongs to customers of the organisation (its mail is listed for the
   * PortalSignInMail workflow), absent when not (nothing is sent).
   */
  | { kind: 'granted'; linkId?: string };

/**
 * A debtor asks for a sign-in link (docs/customer-portal.md). The answer the person sees is the same whether the
 * address is known or not; only the rate limit is visible, and it counts known and unknown addresses alike. Limits
 * are kept in the database (portal_sign_in_attempts), so they hold across processes and restarts.
 *
 * The address is looked up by the customers' blind index (exact match): as typed, then with its domain in lower case
 * (domains know no case), then all in lower case: customers' addresses are stored as the integrator gave them, and
 * most people type theirs in lower case. Every customer of
 * the organisation with the address is reached by the link (see the session, which sees them all).
 */
export async function requestSignInLink(
  sql: Queryable,
  keyring: Keyring,
  input: {
    organizationId: string;
    email: string;
    clientAddress: string;
    /** Where the link points, up to the token (the portal's address as the request reached it). */
    linkBase: string;
    /** The mail's language when the customer has none. */
    language: Language;
  },
  limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
): Promise<SignInRequest> {
  const org = input.organizationId;
  const typed = input.email.trim();
  const keys = [
    { key: keyring.blindIndex('portal-sign-in-address', `${org}\u0000${typed.toLowerCase()}`), limit: limits.perAddress },
    { key: keyring.blindIndex('portal-sign-in-client', `${org}\u0000${input.clientAddress}`), limit: limits.perClient },
  ];
  // One request of the organisation at a time decides against the counts, so two at once cannot both take the last slot.
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`portal-sign-in:${org}`}, 0))`;
  await sql`
    DELETE FROM portal_sign_in_attempts
    WHERE organization_id = ${org} AND attempted_at < now() - make_interval(secs => ${limits.windowSeconds})`;
  let retryAfterSeconds = 0;
  for (const { key, limit } of keys) {
    const [row] = await sql<{ n: number; free_in: number | null }[]>`
      SELECT count(*)::int AS n,
             ceil(extract(epoch FROM min(attempted_at) + make_interval(secs => ${limits.windowSeconds}) - now()))::int AS free_in
      FROM portal_sign_in_attempts
      WHERE organization_id = ${org} AND limit_key = ${key}`;
    if (row!.n >= limit) retryAfterSeconds = Math.max(retryAfterSeconds, row!.free_in ?? 1, 1);
  }
  if (retryAfterSeconds > 0) return { kind: 'limited', retryAfterSeconds };
  for (const { key } of keys) await sql`INSERT INTO portal_sign_in_attempts (organization_id, limit_key) VALUES (${org}, ${key})`;
  // Links nobody can redeem any more are of no use to keep.
  await sql`DELETE FROM portal_sign_in_links WHERE organization_id = ${org} AND expires_at < now() - interval '1 day'`;

  if (typed.length === 0 || typed.length > 254) return { kind: 'granted' };
  const at = typed.lastIndexOf('@');
  const candidates = [...new Set([typed, `${typed.slice(0, at)}@${typed.slice(at + 1).toLowerCase()}`, typed.toLowerCase()])];
  for (const address of candidates) {
    const bidx = emailIndex(keyring, address);
    const [customer] = await sql<{ language: Language | null }[]>`
      SELECT language FROM customers
      WHERE organization_id = ${org} AND email_bidx = ${bidx} AND email_enc IS NOT NULL
      ORDER BY created_at, id LIMIT 1`;
    if (!customer) continue;
    const token = newPortalToken();
    const linkId = uuidv7();
    // The token is kept encrypted until the workflow has mailed it (to the stored address, exactly as the invoices
    // go to it: the typed one may differ in case); the engine's journal sees only the link's id.
    await sql`
      INSERT INTO portal_sign_in_links (token_sha256, id, organization_id, email_bidx, token_enc, link_base, language, expires_at)
      VALUES (${portalTokenHash(token)!}, ${linkId}, ${org}, ${bidx}, ${keyring.encrypt(token)}, ${input.linkBase},
              ${customer.language ?? input.language}, now() + make_interval(mins => ${SIGN_IN_LINK_MINUTES}))`;
    await scheduleWake(sql, org, WORK.portalSignInMail(linkId), new Date());
    return { kind: 'granted', linkId };
  }
  return { kind: 'granted' };
}
