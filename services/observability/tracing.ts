/**
 * OpenTelemetry traces (docs/operations.md, "Traces and logs"). With OTEL_EXPORTER_OTLP_ENDPOINT set, each service
 * of a process gets a tracer provider of its own (its resource names the service: `faktura-api`, `faktura-pay`,
 * `faktura-workflows`, or OTEL_SERVICE_NAME), exporting in batches over OTLP/HTTP, and the process gets the
 * AsyncLocalStorage context manager and the W3C `traceparent` propagator. Unset, nothing here runs: no provider, no
 * exporter, and every span the code asks for is the API's no-op span.
 *
 * Spans are started explicitly at a few choke points (an HTTP request, a hand-off to the engine, a Restate
 * invocation and its steps, a unit of work on PostgreSQL, an outgoing HTTP call or mail), not by patching modules:
 * the code runs as ES modules with type stripping, where require hooks do not see the imports.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, NodeTracerProvider, ParentBasedSampler, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { hostname } from 'node:os';
import type { Config } from '../shared/config.ts';

export type TracedService = 'faktura-api' | 'faktura-pay' | 'faktura-workflows';

export type TracingConfig = Pick<Config, 'otlpEndpoint' | 'otlpProtocol' | 'otelServiceName'>;

/** What a service holds of tracing: its tracer (the no-op one when tracing is off) and the flush at its stop. */
export interface ServiceTracing {
  enabled: boolean;
  /** The resource's service.name, also when tracing is off. */
  serviceName: string;
  tracer: Tracer;
  /** Exports what is still buffered and releases the provider (the process's globals with the last one). */
  shutdown(): Promise<void>;
}

const TRACER_NAME = 'faktura';

interface Registered {
  provider: NodeTracerProvider;
  tracer: Tracer;
  users: number;
}

/** Per service.name: one provider per service, however often a process starts it (tests start many apps). */
const providers = new Map<string, Registered>();
let exportersCreated = 0;

/** How many OTLP exporters this process has created: 0 whenever OTEL_EXPORTER_OTLP_ENDPOINT was unset. */
export function otlpExportersCreated(): number {
  return exportersCreated;
}

/**
 * Tracing for one service of this process. Each call must be paired with a `shutdown()` of what it returns; the
 * provider of a service stays while any of its users runs (the one-process stack of `npm start` starts three).
 */
export function startTracing(config: TracingConfig, service: TracedService): ServiceTracing {
  const serviceName = config.otelServiceName ?? service;
  if (!config.otlpEndpoint) {
    return { enabled: false, serviceName, tracer: trace.getTracer(TRACER_NAME), shutdown: () => Promise.resolve() };
  }
  let registered = providers.get(serviceName);
  if (!registered) {
    const url = `${config.otlpEndpoint}/v1/traces`;
    const exporter = config.otlpProtocol === 'http/json' ? new OtlpJsonExporter({ url }) : new OtlpProtobufExporter({ url });
    exportersCreated++;
    const provider = new NodeTracerProvider({
      // The instance tells replicas apart (start:cluster runs two of each): host and process.
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, 'service.instance.id': `${hostname()}:${process.pid}` }),
      // Every trace is kept (a caller's sampling decision is followed): the volume is one trace per API request and
      // per durable invocation, and a collector samples further if it must.
      sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
    });
    // The first provider of the process also installs the context manager and the propagator (W3C trace context only:
    // baggage would carry whatever a caller put in it into Restate's journal).
    if (providers.size === 0) provider.register({ propagator: new W3CTraceContextPropagator() });
    registered = { provider, tracer: provider.getTracer(TRACER_NAME), users: 0 };
    providers.set(serviceName, registered);
  }
  registered.users++;
  const own = registered;
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    serviceName,
    tracer: own.tracer,
    shutdown() {
      stopped ??= (async () => {
        own.users--;
        if (own.users > 0) {
          await own.provider.forceFlush();
          return;
        }
        providers.delete(serviceName);
        await own.provider.shutdown();
        if (providers.size === 0) {
          trace.disable();
          context.disable();
          propagation.disable();
        }
      })();
      return stopped;
    },
  };
}

/**
 * The tracer for a span under the active one, from shared code that serves every service (the database, outgoing
 * HTTP and mail): the provider of the service whose span is active, so that in the one-process stack a query made
 * for the API is the API's. Undefined when no span is recording: work outside a request or a durable step (the
 * heartbeats, the relay's polls) is not traced at all.
 */
export function childTracer(): Tracer | undefined {
  if (providers.size === 0) return undefined;
  const active = trace.getActiveSpan();
  if (!active?.isRecording()) return undefined;
  const name = (active as Partial<ReadableSpan>).resource?.attributes[ATTR_SERVICE_NAME];
  const own = typeof name === 'string' ? providers.get(name) : undefined;
  // The Restate hook hands its handlers a wrapper of the attempt span, which has no resource; the workflows' steps
  // are what runs there.
  return (own ?? providers.get('faktura-workflows') ?? providers.values().next().value)?.tracer;
}

/**
 * Runs `fn` in a span that is a child of the active one (nothing is recorded when no span is recording), ending it
 * with an error status when `fn` throws. The status names the error's code or class only: messages may quote an
 * address or a value (an SMTP refusal, a constraint violation), which traces must not carry.
 */
export async function inChildSpan<T>(
  name: string,
  opts: { kind: SpanKind; attributes?: Attributes },
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const tracer = childTracer();
  if (!tracer) return fn(undefined);
  return tracer.startActiveSpan(name, { kind: opts.kind, ...(opts.attributes ? { attributes: opts.attributes } : {}) }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      const code = (err as { code?: unknown } | undefined)?.code;
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** `trace_id` and `span_id` of the recording span for a log line, or nothing. */
export function traceFields(span: Span | undefined = trace.getActiveSpan()): { trace_id?: string; span_id?: string } {
  if (!span?.isRecording()) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The W3C trace context of the active span as headers for an outgoing call (empty when tracing is off). */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(ctx, headers);
  return headers;
}

export { SpanKind };
