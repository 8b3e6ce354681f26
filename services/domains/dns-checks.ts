import { Resolver } from 'node:dns/promises';

/**
 * The live DNS checks behind POST /v1/payment-domain/verify (a TXT record holds the organisation's value) and
 * POST /v1/customer-portal/verify-domain (the custom domain is a CNAME to PORTAL_CNAME_TARGET). Each check asks the
 * configured resolvers (DNS_SERVERS, else the system's) at the moment it is called; nothing is cached here, so a record
 * just published is seen as soon as the resolvers see it.
 *
 * A check never throws for what DNS answers: a missing record, a wrong value, a name that does not exist, a timeout
 * or a refusing server all come back as a failed check with a sentence saying which, which the caller records as the
 * domain's `failureReason`. The sentence names only the checked name and what was expected, never a value DNS
 * answered with (another CNAME target, another TXT text): those are not the organisation's to read through us.
 */
export type CheckOutcome = { ok: true } | { ok: false; reason: string };

export interface DnsChecks {
  /** Whether `name` has a TXT record whose text (its strings joined) equals `expected`. */
  txtHolds(name: string, expected: string): Promise<CheckOutcome>;
  /** Whether `name` is a CNAME to `target` (compared without case and trailing dot). */
  cnameTo(name: string, target: string): Promise<CheckOutcome>;
}

export interface DnsCheckOptions {
  /** `host` or `host:port` items (DNS_SERVERS); unset: the system's resolvers. */
  servers?: string[] | undefined;
  /** Milliseconds before the first try times out (later tries wait longer, as c-ares backs off). */
  timeoutMs?: number;
  tries?: number;
}

/**
 * A request waits for the check, so it is bounded: 1 s for the first try and 2 s for the second, about 3 s in all
 * when every server stays silent, well below any HTTP client's patience.
 */
const DEFAULT_TIMEOUT_MS = 1000;
const DEFAULT_TRIES = 2;

const canonical = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** What a resolver error means for the name, in words for `failureReason`. */
function lookupFailure(err: unknown, name: string, type: 'TXT' | 'CNAME'): string {
  const code = (err as { code?: string }).code;
  switch (code) {
    case 'ENODATA':
      return type === 'TXT' ? `No TXT record found at ${name}.` : `${name} has no CNAME record.`;
    case 'ENOTFOUND':
      return `${name} does not exist in DNS (NXDOMAIN).`;
    case 'ETIMEOUT':
      return `The DNS lookup of ${name} timed out.`;
    case 'ESERVFAIL':
      return `The DNS server failed to answer for ${name} (SERVFAIL).`;
    case 'EREFUSED':
      return `The DNS server refused the lookup of ${name}.`;
    case 'ECONNREFUSED':
      return `The DNS server could not be reached for ${name}.`;
    default:
      return `The DNS lookup of ${name} failed (${code ?? 'unknown error'}).`;
  }
}

export function createDnsChecks(opts: DnsCheckOptions = {}): DnsChecks {
  // One resolver per check: Resolver.cancel() or a server change never reaches another request's lookup.
  const resolver = (): Resolver => {
    const r = new Resolver({ timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, tries: opts.tries ?? DEFAULT_TRIES });
    if (opts.servers?.length) r.setServers(opts.servers);
    return r;
  };
  return {
    async txtHolds(name, expected) {
      let records: string[][];
      try {
        records = await resolver().resolveTxt(name);
      } catch (err) {
        return { ok: false, reason: lookupFailure(err, name, 'TXT') };
      }
      // A TXT record may be split into strings of at most 255 bytes; its text is their concatenation (RFC 7208 3.3).
      if (records.some((chunks) => chunks.join('').trim() === expected)) return { ok: true };
      // What the records hold instead is not repeated: it is another party's DNS data (or a resolver's), not ours to show.
      return { ok: false, reason: records.length === 0 ? `No TXT record found at ${name}.` : `${name} has no TXT record with the expected value.` };
    },

    async cnameTo(name, target) {
      let targets: string[];
      try {
        targets = await resolver().resolveCname(name);
      } catch (err) {
        return { ok: false, reason: lookupFailure(err, name, 'CNAME') };
      }
      if (targets.some((t) => canonical(t) === canonical(target))) return { ok: true };
      if (targets.length === 0) return { ok: false, reason: `${name} has no CNAME record.` };
      // Where the name points instead is not repeated (it may name hosts of an internal network); the target is ours.
      return { ok: false, reason: `${name} is not a CNAME to ${canonical(target)}.` };
    },
  };
}
