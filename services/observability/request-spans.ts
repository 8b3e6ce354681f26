import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { traceFields, type ServiceTracing } from './tracing.ts';

const SPAN = Symbol('request span');
const CONTEXT = Symbol('request trace context');

type TracedRequest = FastifyRequest & { [SPAN]?: Span; [CONTEXT]?: Context };

/**
 * Health probes are not traced: the proxies and the orchestrator ask every second or few, which would bury the
 * requests in traces of their own.
 */
const UNTRACED_ROUTES = new Set(['/healthz', '/readyz']);

/**
 * A SERVER span per request, named `METHOD route-template` (never the path itself, which carries ids), continuing a
 * caller's `traceparent`. It is the active span while the request's hooks and handler run, so the use case's units
 * of work and its hand-offs to the engine become its children, and the request's log lines (the one written at its
 * end too) carry its `trace_id` and `span_id`. A 5xx answer marks it as an error. Registered first, before every
 * other hook; not at all when tracing is off. Health probes are left out.
 */
export function traceRequests(app: FastifyInstance, tracing: ServiceTracing): void {
  if (!tracing.enabled) return;
  const { tracer } = tracing;
  app.addHook('onRequest', (req: TracedRequest, reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const route = req.is404 ? undefined : req.routeOptions.url;
    if (route !== undefined && UNTRACED_ROUTES.has(route)) return done();
    const span = tracer.startSpan(
      route ? `${req.method} ${route}` : req.method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': req.method, ...(route ? { 'http.route': route } : {}), 'url.scheme': req.protocol },
      },
      parent,
    );
    const ctx = trace.setSpan(parent, span);
    req[SPAN] = span;
    req[CONTEXT] = ctx;
    req.log = req.log.child(traceFields(span));
    reply.log = req.log;
    context.with(ctx, done);
  });
  // The body arrives on the socket's events, outside the context entered above: the hooks after it and the handler
  // are put back into the request's context here.
  app.addHook('preValidation', (req: TracedRequest, _reply, done) => {
    const ctx = req[CONTEXT];
    if (ctx) context.with(ctx, done);
    else done();
  });
  app.addHook('onResponse', (req: TracedRequest, reply, done) => {
    end(req, reply.statusCode);
    done();
  });
  // A client that went away before the answer: onResponse does not come.
  app.addHook('onRequestAbort', (req: TracedRequest, done) => {
    end(req, undefined);
    done();
  });
}

function end(req: TracedRequest, statusCode: number | undefined): void {
  const span = req[SPAN];
  if (!span) return;
  req[SPAN] = undefined;
  if (statusCode === undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'client closed the request' });
  } else {
    span.setAttribute('http.response.status_code', statusCode);
    if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}
