import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * Where webhooks may go (SSRF protection). A receiver must be a public HTTPS address: no credentials in the URL,
 * no private, loopback, link-local, multicast, CGNAT, unique-local, reserved or cloud-metadata destination, however
 * it is spelled. The WHATWG URL parser already turns decimal, octal and hexadecimal IPv4 forms into dotted quads
 * and IPv6 into its canonical form, so the checks below see one spelling per address; IPv4-mapped, NAT64 and 6to4
 * IPv6 addresses are judged by the IPv4 address they carry.
 *
 * The same rules run twice: at registration (the URL and what its name resolves to now) and at every delivery,
 * against the address the connection actually goes to, so a name that later resolves inward (DNS rebinding)
 * reaches nothing.
 */
export interface UrlPolicy {
  /** WEBHOOK_ALLOW_LOOPBACK: loopback receivers (also over http://) for local development and tests. */
  allowLoopback: boolean;
}

/** Resolves a host name to its addresses (all families). Injected in tests; DNS in production. */
export type Resolver = (host: string) => Promise<string[]>;

export const dnsResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export type UrlVerdict = { ok: true; url: URL; host: string } | { ok: false; reason: string };

type Range = { base: number[]; bits: number; reason: string };

const v4 = (cidr: string, reason: string): Range => {
  const [addr, bits] = cidr.split('/') as [string, string];
  return { base: addr.split('.').map(Number), bits: Number(bits), reason };
};

/** Loopback is listed apart: WEBHOOK_ALLOW_LOOPBACK lifts exactly this one. */
const V4_LOOPBACK = v4('127.0.0.0/8', 'a loopback address');
const V4_FORBIDDEN: Range[] = [
  v4('0.0.0.0/8', 'an unspecified ("this network") address'),
  v4('10.0.0.0/8', 'a private address'),
  v4('100.64.0.0/10', 'a shared (CGNAT) address'),
  v4('169.254.0.0/16', 'a link-local or cloud-metadata address'),
  v4('172.16.0.0/12', 'a private address'),
  v4('192.0.0.0/24', 'an IETF protocol address'),
  v4('192.0.2.0/24', 'a documentation address'),
  v4('192.88.99.0/24', 'a 6to4 relay address'),
  v4('192.168.0.0/16', 'a private address'),
  v4('198.18.0.0/15', 'a benchmarking address'),
  v4('198.51.100.0/24', 'a documentation address'),
  v4('203.0.113.0/24', 'a documentation address'),
  v4('224.0.0.0/4', 'a multicast address'),
  v4('240.0.0.0/4', 'a reserved or broadcast address'),
  // Azure's instance metadata and DNS endpoint sits on a public address.
  v4('168.63.129.16/32', 'a cloud-metadata address'),
];

const inRange = (bytes: number[], r: Range): boolean => {
  let bits = r.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (r.base[i]! & mask)) return false;
  }
  return true;
};

function parseV6(text: string): number[] | null {
  let s = text.toLowerCase();
  if (s.includes('%')) return null; // zone ids name an interface: always local
  const lastColon = s.lastIndexOf(':');
  if (lastColon < 0) return null;
  // A dotted-quad tail (::ffff:1.2.3.4) fills the last two words.
  let quad: number[] | null = null;
  const last = s.slice(lastColon + 1);
  if (last.includes('.')) {
    quad = last.split('.').map((n) => (/^\d{1,3}$/.test(n) ? Number(n) : NaN));
    if (quad.length !== 4 || quad.some((n) => !(n >= 0 && n <= 255))) return null;
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const words = expand(s);
  if (!words) return null;
  if (quad) {
    words[6] = (quad[0]! << 8) | quad[1]!;
    words[7] = (quad[2]! << 8) | quad[3]!;
  }
  return toBytes(words);
}

function expand(s: string): number[] | null {
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const part = (h: string) => (h === '' ? [] : h.split(':').map((w) => (/^[0-9a-f]{1,4}$/.test(w) ? parseInt(w, 16) : NaN)));
  const head = part(halves[0]!);
  const rest = halves.length === 2 ? part(halves[1]!) : [];
  if ([...head, ...rest].some(Number.isNaN)) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const fill = 8 - head.length - rest.length;
  if (fill < 1) return null;
  return [...head, ...new Array<number>(fill).fill(0), ...rest];
}

const toBytes = (words: number[]): number[] => words.flatMap((w) => [w >> 8, w & 0xff]);

function v4Verdict(bytes: number[], policy: UrlPolicy): string | null {
  if (inRange(bytes, V4_LOOPBACK)) return policy.allowLoopback ? null : V4_LOOPBACK.reason;
  for (const r of V4_FORBIDDEN) if (inRange(bytes, r)) return r.reason;
  return null;
}

const prefix = (bytes: number[], hex: number[]): boolean => hex.every((b, i) => bytes[i] === b);

function v6Verdict(b: number[], policy: UrlPolicy): string | null {
  const zeros = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeros(15) && b[15] === 1) return policy.allowLoopback ? null : 'a loopback address';
  if (zeros(16)) return 'an unspecified address';
  // ::ffff:a.b.c.d (IPv4-mapped) and 64:ff9b::a.b.c.d (NAT64) reach the IPv4 address they carry.
  if (zeros(10) && b[10] === 0xff && b[11] === 0xff) return v4Verdict(b.slice(12), policy);
  if (prefix(b, [0x00, 0x64, 0xff, 0x9b]) && b.slice(4, 12).every((x) => x === 0)) return v4Verdict(b.slice(12), policy);
  if (zeros(12)) return 'an IPv4-compatible address';
  // 6to4 carries an IPv4 address in bits 16..47.
  if (b[0] === 0x20 && b[1] === 0x02) return v4Verdict(b.slice(2, 6), policy);
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return 'a Teredo address';
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return 'a documentation address';
  if ((b[0]! & 0xfe) === 0xfc) return 'a unique-local address';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'a link-local address';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0xc0) return 'a site-local address';
  if (b[0] === 0xff) return 'a multicast address';
  // Everything else outside global unicast (2000::/3) is reserved: NAT64 local use, discard, ORCHID…
  if ((b[0]! & 0xe0) !== 0x20) return 'a reserved address';
  return null;
}

/** Why a connection to this IP address is refused, or null when it may be used. */
export function addressVerdict(address: string, policy: UrlPolicy): string | null {
  const family = isIP(address);
  if (family === 4) return v4Verdict(address.split('.').map(Number), policy);
  if (family === 6) {
    const bytes = parseV6(address);
    return bytes ? v6Verdict(bytes, policy) : 'an unrecognised address';
  }
  return 'not an IP address';
}

/** Names that only ever mean something inside a network. */
const INTERNAL_SUFFIXES = ['localhost', 'local', 'localdomain', 'internal', 'intranet', 'lan', 'corp', 'home.arpa'];

const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** The host as it will be dialled: lower case, without brackets and without trailing dots. */
export function dialHost(url: URL): string {
  let host = url.hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return host.replace(/\.+$/, '');
}

/** How long registration waits for DNS; an answer that does not come in time is left to the delivery-time check. */
const RESOLVE_TIMEOUT_MS = 2000;

/**
 * The registration check. A name that resolves to any forbidden address is refused; a name that does not resolve
 * (yet) is accepted, because the delivery-time check decides on the address actually connected to.
 */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy, resolve: Resolver = dnsResolver): Promise<UrlVerdict> {
  const no = (reason: string): UrlVerdict => ({ ok: false, reason });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return no('The URL cannot be parsed.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return no('Webhook URLs must use https://.');
  if (url.username !== '' || url.password !== '') return no('Webhook URLs must not carry credentials.');
  const host = dialHost(url);
  if (host === '') return no('The URL has no host.');
  let loopback: boolean;
  if (isIP(host)) {
    const verdict = addressVerdict(host, policy);
    if (verdict) return no(`The URL points to ${verdict}.`);
    loopback = addressVerdict(host, { allowLoopback: false }) !== null;
  } else {
    if (isLoopbackName(host)) {
      if (!policy.allowLoopback) return no('The URL points to a loopback host.');
      loopback = true;
    } else {
      if (!host.includes('.')) return no('The URL points to a single-label (internal) host name.');
      if (INTERNAL_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`))) return no('The URL points to an internal host name.');
      const addresses = await resolveWithin(resolve, host, RESOLVE_TIMEOUT_MS);
      for (const a of addresses) {
        const verdict = addressVerdict(a, policy);
        if (verdict) return no(`The host name resolves to ${verdict}.`);
      }
      loopback = addresses.length > 0 && addresses.every((a) => addressVerdict(a, { allowLoopback: false }) !== null);
    }
  }
  // Plain http is allowed only for loopback receivers, and only where the operator allows loopback at all.
  if (url.protocol === 'http:' && !(policy.allowLoopback && loopback)) return no('Webhook URLs must use https://.');
  return { ok: true, url, host };
}

async function resolveWithin(resolve: Resolver, host: string, ms: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([resolve(host), new Promise<string[]>((r) => (timer = setTimeout(() => r([]), ms)))]);
  } catch {
    return [];
  } finally {
    clearTimeout(timer);
  }
}
