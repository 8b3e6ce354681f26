import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { SpanStatusCode } from '@opentelemetry/api';
import { inChildSpan, SpanKind } from '../../services/observability/tracing.ts';
import { addressVerdict, dialHost, dnsResolver, type Resolver, type UrlPolicy } from '../../services/webhooks/url-policy.ts';

/** A 2xx within this time is a success (docs/api-conventions.md, "Events, webhooks and the test clock", Delivery). */
export const DELIVERY_TIMEOUT_MS = 15_000;

export interface PostOutcome {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  succeeded: boolean;
}

export interface PostOptions {
  policy: UrlPolicy;
  resolve?: Resolver;
  timeoutMs?: number;
  /** Keep-alive agents; without them every attempt opens a connection of its own. */
  agents?: WebhookAgents;
}

export interface WebhookAgents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * Connections to receivers are kept open for reuse between deliveries. Every pooled connection was opened through
 * the checked lookup below and checked again once connected, so reuse never reaches an address the rules refuse.
 */
export const createWebhookAgents = (): WebhookAgents => ({
  http: new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 }),
});

class Refused extends Error {}

/**
 * POSTs one signed webhook body. Redirects are not followed (a 3xx is a failure), only a 2xx counts, and the whole
 * exchange up to the response headers must fit in the timeout.
 *
 * The destination is judged at connect time, against the address actually connected to: the host name is resolved
 * here, every address it resolves to must pass the URL policy, and the socket dials exactly those checked
 * addresses (no second resolution a rebinding DNS server could answer differently). The connected socket's remote
 * address is checked once more before a byte is sent.
 */
export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  opts: PostOptions,
): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (error: string, statusCode: number | null = null): PostOutcome => ({ statusCode, durationMs: elapsed(), error, succeeded: false });
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return fail('the URL cannot be parsed');
  }
  const host = dialHost(url);
  const resolve = opts.resolve ?? dnsResolver;
  if (isIP(host)) {
    const verdict = addressVerdict(host, opts.policy);
    if (verdict) return fail(`refused: the URL points to ${verdict}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return fail('refused: not an https URL');
  if (url.username || url.password) return fail('refused: credentials in the URL');

  const lookup: LookupFunction = (hostname, options, callback) => {
    const name = hostname.replace(/\.+$/, '');
    resolve(name).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${name} does not resolve`), { code: 'ENOTFOUND' }), '', 0);
        for (const a of addresses) {
          const verdict = addressVerdict(a, opts.policy);
          if (verdict) return callback(new Refused(`refused: ${name} resolves to ${verdict} (${a})`), '', 0);
        }
        const family = (a: string) => (isIP(a) === 6 ? 6 : 4);
        if ((options as { all?: boolean }).all) {
          (callback as unknown as (err: null, list: { address: string; family: number }[]) => void)(
            null,
            addresses.map((a) => ({ address: a, family: family(a) })),
          );
        } else {
          callback(null, addresses[0]!, family(addresses[0]!));
        }
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };

  // A CLIENT span under the delivery step; the receiver's trace context is its own (nothing is sent to it).
  const attributes = { 'http.request.method': 'POST', 'server.address': host };
  return inChildSpan('POST webhook', { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const outcome = await send(url, headers, body, opts, lookup, fail, elapsed);
    if (outcome.statusCode !== null) span?.setAttribute('http.response.status_code', outcome.statusCode);
    if (!outcome.succeeded) span?.setStatus({ code: SpanStatusCode.ERROR, ...(outcome.statusCode === null ? {} : { message: `HTTP ${outcome.statusCode}` }) });
    return outcome;
  });
}

function send(
  url: URL,
  headers: Record<string, string>,
  body: string,
  opts: PostOptions,
  lookup: LookupFunction,
  fail: (error: string, statusCode?: number | null) => PostOutcome,
  elapsed: () => number,
): Promise<PostOutcome> {
  return new Promise<PostOutcome>((settle) => {
    let done = false;
    const finish = (o: PostOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      settle(o);
    };
    const secure = url.protocol === 'https:';
    const client = secure ? https : http;
    const req = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), 'user-agent': 'faktura-webhooks/1' },
      lookup,
      agent: opts.agents ? (secure ? opts.agents.https : opts.agents.http) : false,
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish(fail(`no response within ${Math.round((opts.timeoutMs ?? DELIVERY_TIMEOUT_MS) / 1000)} s`));
    }, opts.timeoutMs ?? DELIVERY_TIMEOUT_MS);
    req.on('socket', (socket: Socket) => {
      // A pooled socket was checked when it connected.
      if (!socket.connecting) return;
      socket.once('connect', () => {
        const remote = socket.remoteAddress ?? '';
        const verdict = addressVerdict(remote, opts.policy);
        // Plain http only ever reaches loopback (WEBHOOK_ALLOW_LOOPBACK), whatever the name resolved to.
        const plainToRemote = url.protocol === 'http:' && addressVerdict(remote, { allowLoopback: false }) === null;
        if (verdict || plainToRemote) {
          req.destroy(new Refused(verdict ? `refused: connected to ${verdict} (${remote})` : 'refused: plain http to a non-loopback address'));
        }
      });
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      // The body is not needed; read it off the socket so the connection can end cleanly.
      res.resume();
      const ok = status >= 200 && status < 300;
      finish({ statusCode: status, durationMs: elapsed(), error: ok ? null : `HTTP ${status}`, succeeded: ok });
    });
    req.on('error', (err) => {
      const code = (err as NodeJS.ErrnoException).code;
      finish(fail(err instanceof Refused ? err.message : code ? `${code}: ${err.message}` : err.message));
    });
    if (url.protocol === 'http:' && !opts.policy.allowLoopback) {
      req.destroy(new Refused('refused: plain http'));
      return;
    }
    req.end(body);
  });
}
