/**
 * DNS host names as the settings take them ("a DNS host name with at least one dot"; docs/api-conventions.md, "Payment
 * domain"): labels of 1..63 letters, digits and hyphens, not starting or ending with a hyphen, at least two of them,
 * 253 characters at most. The name is compared and stored in lower case; one trailing dot (the absolute form) is
 * dropped. An IPv4 address is not a host name (its last label is all digits), and a name in Unicode is given in its
 * ASCII form (`xn--…`), as DNS holds it.
 */
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOST_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})+$`);

/** The name in its stored form, or undefined when it is not a host name with at least one dot. */
export function normalizeHostName(input: string): string | undefined {
  const name = input.toLowerCase().replace(/\.$/, '');
  if (!HOST_NAME.test(name)) return undefined;
  if (/^[0-9]+$/.test(name.slice(name.lastIndexOf('.') + 1))) return undefined;
  return name;
}

/**
 * Zones that never resolve on the public internet: a payment link or a portal address there would reach nobody but
 * could point the DNS checks into a network's own names. `.localhost`, `.local` (mDNS), `.home.arpa` (RFC 8375) and
 * `.internal` are reserved for that; `.corp`, `.lan` and `.intranet` are the usual private ones in use.
 */
const INTERNAL_ZONES = ['internal', 'local', 'localhost', 'corp', 'home.arpa', 'lan', 'intranet'] as const;

/** The internal-only zone a (normalised) host name is in, or undefined. */
export function internalZoneOf(name: string): string | undefined {
  return INTERNAL_ZONES.find((zone) => name === zone || name.endsWith(`.${zone}`));
}
