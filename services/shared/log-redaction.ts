/**
 * The request line as the API and the pay service log it. Paths and query strings can carry personal data and
 * capabilities (an e-mail typed into a path, a payment code, a link reference, a tracking token), so:
 *
 * - Path segments are kept only when they are ids (UUIDs) or fixed words of the route. With the matched route
 *   pattern (Fastify's `request.routeOptions.url`) each parameter that is neither a UUID nor one of those words is
 *   shown by its name (`/p/:reference` logs `/p/[reference]`); without one (no route matched) every segment that is neither a UUID
 *   nor a word of one of the service's routes is `[redacted]`.
 * - Query values are kept only for names the service lists as harmless (`limit`, `lang`, …); every other value is
 *   `[redacted]` (or the text the service names in `maskedAs`). Names are judged decoded, so `?e%6Dail=` is masked
 *   like `?email=`.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const REDACTED = '[redacted]';

export interface QueryRules {
  /** Query parameters whose values are harmless and logged as sent. */
  keep: ReadonlySet<string>;
  /** What a masked value is written as, for parameters shown otherwise than `[redacted]` (the pay page's `session`). */
  maskedAs?: Readonly<Record<string, string>>;
}

/** What is known of the request's route: the matched pattern, and the fixed words of all the service's routes. */
export interface RouteHint {
  route?: string | undefined;
  words?: RouteWords | undefined;
}

/** The fixed words of a service's route patterns, collected as routes are added (an `onRoute` hook). */
export class RouteWords {
  readonly #words = new Set<string>();

  add(pattern: string): void {
    for (const segment of pattern.split('/')) {
      if (segment !== '' && !segment.includes(':') && !segment.includes('*')) this.#words.add(segment);
    }
  }

  has(segment: string): boolean {
    return this.#words.has(segment);
  }
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const isUuid = (segment: string): boolean => UUID.test(segment);

function maskSegment(segment: string, words: RouteWords | undefined): string {
  if (segment === '' || isUuid(segment) || words?.has(decoded(segment))) return segment;
  return REDACTED;
}

/**
 * The path with every segment that is not a UUID or a fixed word masked. Without a route and without the service's
 * words (a caller outside any request) the path is returned as it is.
 */
export function redactPath(path: string, hint: RouteHint = {}): string {
  const { route, words } = hint;
  const segments = path.split('/');
  if (!route) return words ? segments.map((s) => maskSegment(s, words)).join('/') : path;
  const pattern = route.split('/');
  // The router ignores a trailing slash: `/v1/customers/` matched `/v1/customers`.
  if (segments.length === pattern.length + 1 && segments.at(-1) === '') pattern.push('');
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const p = pattern[i];
    if (p === undefined || p.includes('*')) {
      out.push(...segments.slice(i).map((s) => maskSegment(s, words)));
      break;
    }
    if (p.includes(':')) {
      // A parameter is shown when it is an id or one of the service's fixed words (a provider's name), else by name.
      out.push(isUuid(segment) || words?.has(decoded(segment)) ? segment : `[${/:([A-Za-z0-9_]+)/.exec(p)?.[1] ?? 'param'}]`);
    }
    else out.push(segment === p ? segment : maskSegment(segment, words));
  }
  return out.join('/');
}

/** The query string (without its `?`) with the values of every parameter not listed as harmless masked. */
export function redactQuery(query: string, rules: QueryRules): string {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return REDACTED;
  }
  const parts: string[] = [];
  for (const [name, value] of params) {
    const shown = rules.keep.has(name) ? encodeURIComponent(value) : (rules.maskedAs?.[name] ?? REDACTED);
    parts.push(`${encodeURIComponent(name)}=${shown}`);
  }
  return parts.join('&');
}

/** A request URL (path and query) as logged. */
export function redactRequestUrl(url: string, rules: QueryRules, hint: RouteHint = {}): string {
  const q = url.indexOf('?');
  const path = redactPath(q < 0 ? url : url.slice(0, q), hint);
  return q < 0 ? path : `${path}?${redactQuery(url.slice(q + 1), rules)}`;
}
