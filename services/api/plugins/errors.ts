import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { DomainError, type ErrorDetail } from '../../shared/errors.ts';
import { randomToken } from '../../shared/crypto.ts';
import { loggableError, requestValues } from '../../shared/loggable-error.ts';

export interface ErrorEnvelope {
  error: { code: string; message: string; details?: ErrorDetail[]; requestId: string };
}

export function errorBody(req: Pick<FastifyRequest, 'id'>, err: DomainError): ErrorEnvelope {
  const error: ErrorEnvelope['error'] = { code: err.code, message: err.message, requestId: req.id };
  if (err.details) error.details = err.details;
  return { error };
}

export function sendError(req: FastifyRequest, reply: FastifyReply, err: DomainError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  if (err.code === 'unauthenticated') reply.header('WWW-Authenticate', 'Bearer');
  return reply.code(err.status).send(errorBody(req, err));
}

export const pointerToken = (name: string): string => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** Turns AJV's errors into `[{path, message}]` with JSON Pointers to the offending value, one per place. */
export function validationDetails(errors: ErrorObject[], part: string): ErrorDetail[] {
  const byPath = new Map<string, ErrorDetail>();
  // A nullable field (or any union) that got a wrong value fails every branch: "must be null" and "must match a schema
  // in anyOf" are the less useful part when a concrete error names the place, or a place inside it
  // (`/address/street` too long says more than `/address` must be null).
  const isNullBranch = (e: ErrorObject) => e.keyword === 'type' && (e.params as { type?: string }).type === 'null';
  const isUnionNoise = (e: ErrorObject) => isNullBranch(e) || e.keyword === 'anyOf';
  const concretePlaces = errors.filter((e) => !isUnionNoise(e)).map((e) => e.instancePath);
  const explainedAtOrBelow = (path: string) => concretePlaces.some((p) => p === path || p.startsWith(`${path}/`));
  // A union of literals (TypeBox's enums) fails once per literal: the place gets one message naming them all.
  const allowed = new Map<string, unknown[]>();
  for (const e of errors) {
    if (e.keyword !== 'const') continue;
    allowed.set(e.instancePath, [...(allowed.get(e.instancePath) ?? []), (e.params as { allowedValue: unknown }).allowedValue]);
  }
  for (const e of errors) {
    if (isUnionNoise(e) && explainedAtOrBelow(e.instancePath)) continue;
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path += `/${pointerToken((e.params as { missingProperty: string }).missingProperty)}`;
      message = 'is required';
    }
    if (e.keyword === 'additionalProperties') {
      path += `/${pointerToken((e.params as { additionalProperty: string }).additionalProperty)}`;
      message = 'is not an allowed property';
    }
    // A key that breaks its rules (metadata keys 1..40 characters) is pointed at by its own path.
    const key = e.keyword === 'propertyNames' ? (e.params as { propertyName?: string }).propertyName : (e as { propertyName?: string }).propertyName;
    if (key !== undefined) {
      path += `/${pointerToken(key)}`;
      message = e.keyword === 'propertyNames' ? 'is not an allowed key' : `key ${message}`;
    }
    if (e.keyword === 'format') message = `must be a valid ${(e.params as { format: string }).format}`;
    if (e.keyword === 'const') {
      const values = [...new Set(allowed.get(e.instancePath))].map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      // A nullable set (`language`: da, en or null) says that null is taken too.
      const orNull = errors.some((o) => o.instancePath === e.instancePath && isNullBranch(o));
      const listed = orNull ? [...values, 'null'] : values;
      message = listed.length === 1 ? `must be ${listed[0]}` : `must be one of: ${listed.join(', ')}`;
    }
    const pointer = path === '' ? '' : path;
    // Unions report one error per branch; the first concrete one per place reads best.
    if (!byPath.has(pointer) || byPath.get(pointer)!.message.startsWith('must match')) {
      byPath.set(pointer, { path: pointer, message: part === 'body' ? message : `${part} ${message}` });
    }
  }
  return [...byPath.values()];
}

/** The 400 validation_failed of a schema's errors: what every route answers for an invalid body or query. */
export function validationFailure(errors: ErrorObject[], part: string): DomainError {
  const details = validationDetails(errors, part);
  const first = details[0];
  const message = first ? `${first.path || part} ${first.message.replace(`${part} `, '')}.` : 'The request is invalid.';
  return new DomainError('validation_failed', message, { details });
}

const FASTIFY_CODES: Record<string, () => DomainError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new DomainError('unsupported_media_type', 'Request bodies must be application/json.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new DomainError('payload_too_large', 'The request body is larger than this route accepts.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new DomainError('invalid_json', 'The request body is empty but declared as JSON.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new DomainError('invalid_json', 'The Content-Length does not match the body.'),
  FST_ERR_CTP_EMPTY_TYPE: () => new DomainError('unsupported_media_type', 'Request bodies must be application/json.'),
  FST_ERR_CTP_INVALID_TYPE: () => new DomainError('unsupported_media_type', 'Request bodies must be application/json.'),
};

/** The one renderer: every failure becomes the error envelope; nothing internal ever reaches the client. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof DomainError) return sendError(req, reply, err);
    if (err.validation) return sendError(req, reply, validationFailure(err.validation as ErrorObject[], err.validationContext ?? 'body'));
    const mapped = err.code ? FASTIFY_CODES[err.code] : undefined;
    if (mapped) return sendError(req, reply, mapped());
    if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return sendError(req, reply, new DomainError('invalid_json', 'The request body is not valid JSON.'));
    }
    // Logged without the request's values: an error's message may quote them (docs/api-conventions.md, Logs).
    const logged = loggableError(err, requestValues(req));
    if (err.name === 'DocumentIntegrityError') {
      // A stored document no longer matches its hash: never served, and an operator must look at it now.
      req.log.fatal({ err: logged, alert: 'document_integrity' }, 'ALERT: stored document failed its integrity check');
    } else {
      req.log.error({ err: logged }, 'unhandled error');
    }
    return sendError(req, reply, new DomainError('internal_error', 'Something went wrong on our side. The request id identifies it in our logs.'));
  });

  app.setNotFoundHandler((req, reply) =>
    sendError(req, reply, new DomainError('route_not_found', `No route ${req.method} ${req.url.split('?')[0]}.`)),
  );
}

/** JSON Pointer to the first string (value or key) holding U+0000, or undefined. */
export function findNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], `${path}/${i}`);
      if (hit !== undefined) return hit;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\u0000')) return `${path}/${pointerToken(k)}`;
    const hit = findNul(v, `${path}/${pointerToken(k)}`);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** Errors the router raises before any hook runs (a path that cannot be decoded): still the envelope. */
export function frameworkErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('Request-Id', req.id);
  if (err.code === 'FST_ERR_BAD_URL') {
    void sendError(req, reply, new DomainError('route_not_found', 'The request path cannot be decoded.'));
    return;
  }
  void sendError(req, reply, new DomainError('validation_failed', 'The request could not be read.'));
}

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (malformed request line, oversized headers): answer
 * with the envelope and a Request-Id all the same, then close the connection.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const requestId = `req_${randomToken(12)}`;
  const body = JSON.stringify({
    error: {
      code: tooLarge ? 'headers_too_large' : 'invalid_request',
      message: tooLarge ? 'The request headers are too large.' : 'The request is not valid HTTP.',
      requestId,
    },
  });
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
