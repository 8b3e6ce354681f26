import type { Tracer } from '@opentelemetry/api';
import type * as restate from '@restatedev/restate-sdk';
import { openTelemetryHook } from '@restatedev/restate-sdk-opentelemetry';

/**
 * The Restate SDK's OpenTelemetry hook: a span per invocation attempt (`attempt Service/key/handler`) and one per
 * `ctx.run` step that executes (`run (name)`; replayed steps are not run again and get none), children of the trace
 * context in the attempt's headers. restate-server puts its own span there when its tracing is on (`npm start` and
 * `start:cluster` turn it on with OTEL_EXPORTER_OTLP_ENDPOINT). A server without tracing passes no context on; the
 * caller's `traceparent` is then still among the invocation's own headers (those of the ingress call, which the
 * engine client sends), and the attempt is made a child of the caller's span from there.
 */
export function invocationTraceHook(tracer: Tracer): restate.HooksProvider {
  const hook = openTelemetryHook({ tracer });
  return (ctx) => {
    const { attemptHeaders, headers } = ctx.request;
    if (attemptHeaders.has('traceparent') || !headers.has('traceparent')) return hook(ctx);
    // Everything else of the context (the SDK's replay flag among it) is read through the prototype.
    const request = Object.create(ctx.request, { attemptHeaders: { value: headers } }) as restate.Request;
    return hook(Object.create(ctx, { request: { value: request } }) as typeof ctx);
  };
}
