import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * HAProxy from Debian's packages (installed by deploy/ensure-installed.sh) as the proxy of `npm run start:cluster`:
 * one process per public port (the API's PORT, the pay page's PAY_PORT), and one private process in front of what
 * the replicas call among themselves (the Restate nodes' ingress and admin APIs, the workflows endpoints).
 *
 * Every frontend spreads requests round-robin over its servers and retries a refused connection on the next one
 * (`retries` with `option redispatch 1`: every retry goes to another server); such a request never reached a server,
 * so a retry cannot apply it twice. A request that a server accepted and then dropped unanswered (it died in that
 * moment) is retried only when a repeat is harmless: a read, or a write with an Idempotency-Key. A health check takes
 * a server that stopped answering out of the rotation within about a second, and puts it back as soon as it answers.
 */

export interface ProxyServer {
  /** The process name (api-1, restate-2…), as HAProxy's stats and logs name it. */
  name: string;
  port: number;
}

export interface ProxyFrontend {
  /** The frontend's and backend's name: api, pay, restate-ingress, restate-admin, workflows. */
  name: string;
  host: string;
  port: number;
  servers: ProxyServer[];
  /** An HTTP path that answers 200 while the server is healthy; without one, the check is a TCP connect. */
  checkPath?: string;
  /** HTTP/2 without TLS on both sides (h2c): what restate-server speaks to a workflows endpoint. */
  h2?: boolean;
  /** Idle time allowed on a request or response before the proxy gives up (long for Restate's invocation streams). */
  timeoutMs?: number;
  /** The proxy's own 503 (no server up) in the API's error envelope, with a Request-Id, as the API answers errors. */
  apiEnvelopes?: boolean;
  /**
   * The client address for the servers: `set` replaces any X-Forwarded-For (and drops X-Forwarded-Host/-Proto) the
   * client sent, so a server trusting its proxy reads our proxy's word only; `append` keeps a proxy further out.
   */
  forwardedFor?: 'set' | 'append';
}

/** The haproxy binary: on PATH, else Debian's /usr/sbin (not on every user's PATH). */
export function haproxyBinary(): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/usr/local/sbin']) {
    const candidate = join(dir, 'haproxy');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** `host:port` as HAProxy's `bind` takes it; the IPv6 wildcard listens on IPv4 too, like Node's. */
function bindAddress(host: string, port: number): string {
  if (host === '::') return `:::${port} v4v6`;
  if (host.startsWith('[') && host.endsWith(']')) return `${host.slice(1, -1)}:${port}`;
  return `${host}:${port}`;
}

const seconds = (ms: number) => `${Math.max(1, Math.ceil(ms / 1000))}s`;

export function haproxyConfig(opts: { frontends: ProxyFrontend[]; statsPort: number }): string {
  const lines = [
    '# Written by deploy/local/cluster.ts at every start; edits are overwritten.',
    'global',
    '  maxconn 4096',
    // Request headers up to 64 KiB reach the servers, which answer what is too large for them themselves (the API:
    // 431 headers_too_large); beyond that the proxy refuses the request.
    '  tune.bufsize 65536',
    // Logs go to stdout (the process's log file): errors, retries and servers going down or up, not every request.
    '  log stdout format raw local0 info',
    '',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  option dontlog-normal',
    '  timeout connect 1s',
    '  timeout client 5m',
    '  timeout server 5m',
    '  timeout http-request 30s',
    '  timeout http-keep-alive 10s',
    '  timeout queue 5s',
    '  timeout check 2s',
    // A refused connection is tried again on the next server, up to twice (two replicas: each is tried); so is a
    // request whose server closed the connection without answering (it died while taking it), where that is safe
    // (see the backends' disable-l7-retry).
    '  retries 2',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response',
    '  balance roundrobin',
    '  default-server check inter 1s fastinter 250ms downinter 500ms fall 2 rise 1',
    '',
    // Server states and request counts per server, for the cluster's own test and the fault drill.
    'frontend stats',
    `  bind 127.0.0.1:${opts.statsPort}`,
    '  stats enable',
    '  stats uri /',
    '  stats refresh 0',
    '',
  ];
  for (const f of opts.frontends) {
    const timeout = f.timeoutMs ? seconds(f.timeoutMs) : undefined;
    lines.push(`frontend ${f.name}`, `  bind ${bindAddress(f.host, f.port)}${f.h2 ? ' proto h2' : ''}`);
    if (timeout) lines.push(`  timeout client ${timeout}`);
    if (f.apiEnvelopes) lines.push(...envelopeErrors());
    if (f.forwardedFor === 'set') {
      lines.push(
        '  http-request del-header X-Forwarded-Host',
        '  http-request del-header X-Forwarded-Proto',
        '  http-request set-header X-Forwarded-For %[src]',
      );
    } else if (f.forwardedFor === 'append') {
      lines.push('  option forwardfor');
    }
    lines.push(`  default_backend ${f.name}`, '', `backend ${f.name}`);
    if (timeout) lines.push(`  timeout server ${timeout}`);
    // A fresh server connection for every request (the client's stays open): a request sent over an idle connection
    // to a replica that has just died would fail with nothing to retry (HAProxy closes the client's connection and
    // leaves the retry to it); a new connection to a dead replica is refused, and that is retried on the next one.
    // HTTP/2 streams (Restate to the workflows endpoints) share their connection; Restate retries a broken stream.
    if (!f.h2) lines.push('  option http-server-close');
    // A request a server took and then dropped may have had its effect: only a read, or a write that carries an
    // Idempotency-Key (the API, and Restate's ingress, answer a repeat with the first outcome), is sent again.
    lines.push('  http-request disable-l7-retry if !{ method GET HEAD OPTIONS } !{ req.hdr(idempotency-key) -m found }');
    if (f.checkPath) lines.push('  option httpchk', `  http-check send meth GET uri ${f.checkPath}`, '  http-check expect status 200');
    for (const s of f.servers) lines.push(`  server ${s.name} 127.0.0.1:${s.port}${f.h2 ? ' proto h2' : ''}`);
    lines.push('');
  }
  return lines.join('\n');
}

/**
 * The proxy's own 503 (no server up) as the API would answer it (contracts/errors.ts). A request line it cannot parse
 * is refused inside HAProxy's HTTP/1 layer, before any rule applies: that 400 stays HAProxy's own short HTML page.
 */
function envelopeErrors(): string[] {
  const json = (code: string, message: string) =>
    JSON.stringify(JSON.stringify({ error: { code, message, requestId: '@ID@' } })).replace('@ID@', '%[unique-id]');
  const rule = (status: number, code: string, message: string) =>
    `  http-error status ${status} content-type "application/json; charset=utf-8" lf-string ${json(code, message)} hdr Request-Id "%[unique-id]"`;
  return [
    '  unique-id-format req_%[uuid,regsub(-,,g),lower]',
    rule(503, 'service_unavailable', 'The service cannot answer right now; try again in a moment.'),
  ];
}

export interface ProxyServerStats {
  /** Frontend/backend name, e.g. api. */
  proxy: string;
  /** Server name, e.g. api-1. */
  server: string;
  /** UP, DOWN, MAINT, … as HAProxy reports it (with a transition suffix such as "UP 1/2"). */
  status: string;
  /** Requests (HTTP) or connections (TCP) sent to this server since the proxy started. */
  total: number;
  /** Connection attempts that failed, and retries and redispatches away from this server. */
  connectionErrors: number;
  retries: number;
  redispatches: number;
}

/** Per-server counters from a proxy's stats page (CSV). */
export async function readProxyStats(statsPort: number): Promise<ProxyServerStats[]> {
  const res = await fetch(`http://127.0.0.1:${statsPort}/;csv;norefresh`, { signal: AbortSignal.timeout(2000) });
  if (!res.ok) throw new Error(`the proxy's stats page answered ${res.status}`);
  const [header, ...rows] = (await res.text()).trim().split('\n');
  const columns = header!.replace(/^# /, '').split(',');
  const at = (row: string[], name: string) => row[columns.indexOf(name)] ?? '';
  return rows
    .map((line) => line.split(','))
    .filter((row) => !['FRONTEND', 'BACKEND'].includes(at(row, 'svname')) && at(row, 'pxname') !== 'stats')
    .map((row) => ({
      proxy: at(row, 'pxname'),
      server: at(row, 'svname'),
      status: at(row, 'status'),
      total: Number(at(row, 'stot')) || 0,
      connectionErrors: Number(at(row, 'econ')) || 0,
      retries: Number(at(row, 'wretr')) || 0,
      redispatches: Number(at(row, 'wredis')) || 0,
    }));
}
