/**
 * The Restate endpoint: serves the services of workflows/index.ts over HTTP/2 (h2c), with JSON-line logs in the
 * API's format. Knows nothing of the database or of registration.
 */
import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import { traceFields, type ServiceTracing } from '../services/observability/tracing.ts';
import { stepLogHook } from './shared/step-log.ts';
import { invocationTraceHook } from './shared/trace-hook.ts';
import { createServices, type Activities } from './index.ts';

// ---------------------------------------------------------------------------------------------------------------
// Logging: JSON lines with pino's numeric levels, like the API's, so one tool reads both. A line written under a
// traced invocation or step carries its trace_id and span_id.

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

export type LogLine = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export function createJsonLog(stream: NodeJS.WritableStream, minLevel: string, name: string): LogLine {
  const min = LEVELS[minLevel] ?? LEVELS.info!;
  return (level, msg, fields = {}) => {
    const n = LEVELS[level]!;
    if (n < min) return;
    stream.write(`${JSON.stringify({ level: n, time: Date.now(), name, msg, ...traceFields(), ...fields })}\n`);
  };
}

/**
 * The SDK's own lines at info (one per invocation start and end) drown everything else; they appear only at debug.
 * Handler logs (ctx.console) follow the configured level. Replayed lines are dropped: they were logged already.
 */
function sdkLogger(stream: NodeJS.WritableStream, minLevel: string): restate.LoggerTransport {
  const min = LEVELS[minLevel] ?? LEVELS.info!;
  return (meta, message, ...params) => {
    if (meta.replaying) return;
    const n = LEVELS[meta.level] ?? LEVELS.info!;
    // LogSource is a type-only enum in the SDK's exports, so its value is compared as text.
    const floor = String(meta.source) === 'USER' ? min : Math.max(min, LEVELS.warn!);
    if (n < floor) return;
    const text = [message, ...params].map((p) => (p instanceof Error ? (p.stack ?? p.message) : typeof p === 'string' ? p : JSON.stringify(p))).join(' ');
    const ctx = meta.context;
    stream.write(
      `${JSON.stringify({
        level: n,
        time: Date.now(),
        name: 'workflows',
        msg: text,
        ...traceFields(),
        ...(ctx ? { invocationId: ctx.invocationId, target: ctx.invocationTarget } : {}),
      })}\n`,
    );
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The endpoint

export interface WorkflowsEndpoint {
  /** The address restate-server is given at registration. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface EndpointOptions {
  activities: Activities;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Set when restate-server reaches the endpoint under another name than host:port (containers). */
  advertisedUrl?: string | undefined;
  logStream?: NodeJS.WritableStream;
  logLevel?: string;
  /**
   * `publickeyv1_…` keys: only requests restate-server signed with the matching private key are served (others get
   * 401). Empty or unset: every request is served, and the SDK warns so at start.
   */
  identityKeys?: readonly string[];
  /** Spans per invocation attempt and per step, joined to the trace context Restate passes on (tracing.ts). */
  tracing?: ServiceTracing;
}

export async function startWorkflowsEndpoint(opts: EndpointOptions): Promise<WorkflowsEndpoint> {
  const handler = restate.createEndpointHandler({
    services: createServices(opts.activities),
    logger: sdkLogger(opts.logStream ?? process.stdout, opts.logLevel ?? 'info'),
    ...(opts.identityKeys?.length ? { identityKeys: [...opts.identityKeys] } : {}),
    // The span hook outside the step log, so that each step's line is written inside the step's span.
    defaultServiceOptions: {
      hooks: [
        ...(opts.tracing?.enabled ? [invocationTraceHook(opts.tracing.tracer)] : []),
        stepLogHook(createJsonLog(opts.logStream ?? process.stdout, opts.logLevel ?? 'info', 'workflows')),
      ],
    },
  });
  const server = http2.createServer(handler);
  // restate-server keeps its HTTP/2 sessions open; server.close() alone would wait for them forever.
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  let closing: Promise<void> | undefined;
  return {
    url: opts.advertisedUrl ?? `http://${host}:${port}`,
    port,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((r) => server.close(() => r()));
        // Let running handlers finish their current step; Restate retries whatever is cut off, from its journal.
        for (const s of sessions) s.close();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, 1000)))]);
        clearTimeout(timer);
        for (const s of sessions) s.destroy();
        await closed;
      })();
      return closing;
    },
  };
}

