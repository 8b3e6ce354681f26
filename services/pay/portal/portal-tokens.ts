import { randomBytesPooled, safeEqual, sha256, type Keyring } from '../../shared/crypto.ts';

/**
 * The portal's secrets: sign-in link tokens and session tokens are 256 random bits, handed out once and stored only
 * as their SHA-256 (a database copy signs no one in). The CSRF secret of a session (portal-csrf.ts) is derived from
 * it with the keyring's MAC, so it needs no storage and is worthless for any other session.
 */
export const newPortalToken = (): string => randomBytesPooled(32).toString('base64url');

/** The stored form of a token; undefined for text that cannot be one of ours (no look-up is made). */
export function portalTokenHash(token: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
  return sha256(token);
}

export const csrfSecretOf = (keyring: Keyring, sessionHash: Buffer): string =>
  keyring.mac(`portal-csrf\u0000${sessionHash.toString('hex')}`).toString('base64url');

/**
 * Login CSRF on spending a sign-in link: the confirmation page sets a random cookie of its own (SameSite=Strict, so a
 * cross-site form never carries it) and renders this MAC of the cookie and the link's hash into its form. Another
 * site cannot produce the pair in the victim's browser, even with a link of its own that it could open itself.
 */
export const confirmTokenOf = (keyring: Keyring, linkHash: Buffer, browserToken: string): string =>
  keyring.mac(`portal-sign-in-confirm\u0000${linkHash.toString('hex')}\u0000${browserToken}`).toString('base64url');

export function confirmTokenMatches(keyring: Keyring, linkHash: Buffer, browserToken: string | undefined, given: unknown): boolean {
  if (!browserToken || !portalTokenHash(browserToken) || typeof given !== 'string' || given.length > 100) return false;
  return safeEqual(Buffer.from(confirmTokenOf(keyring, linkHash, browserToken)), Buffer.from(given));
}
