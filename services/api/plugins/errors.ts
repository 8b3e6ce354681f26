import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { DomainError, type ErrorDetail } from '../../shared/errors.ts';

export interface ErrorEnvelope {
  error: { code: string; message: string; details?: ErrorDetail[]; requestId: string };
}

export function errorBody(req: FastifyRequest, err: DomainError): ErrorEnvelope {
  const error: ErrorEnvelope['error'] = { code: err.code, message: err.message, requestId: req.id };
  if (err.details) error.details = err.details;
  return { error };
}

export function sendError(req: FastifyRequest, reply: FastifyReply, err: DomainError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  if (err.code === 'unauthenticated') reply.header('WWW-Authenticate', 'Bearer');
  return reply.code(err.status).send(errorBody(req, err));
}

/** Turns AJV's errors into `[{path, message}]` with JSON Pointers to the offending value, one per place. */
export function validationDetails(errors: ErrorObject[], part: string): ErrorDetail[] {
  const byPath = new Map<string, ErrorDetail>();
  for (const e of errors) {
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path += `/${(e.params as { missingProperty: string }).missingProperty}`;
      message = 'is required';
    }
    if (e.keyword === 'additionalProperties') {
      path += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
      message = 'is not an allowed property';
    }
    if (e.keyword === 'propertyNames') message = 'has a key that is not allowed';
    if (e.keyword === 'format') message = `must be a valid ${(e.params as { format: string }).format}`;
    const pointer = path === '' ? '' : path;
    // Unions report one error per branch; the first concrete one per place reads best.
    if (!byPath.has(pointer) || byPath.get(pointer)!.message.startsWith('must match')) {
      byPath.set(pointer, { path: pointer, message: part === 'body' ? message : `${part} ${message}` });
    }
  }
  return [...byPath.values()];
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
    if (err.validation) {
      const part = err.validationContext ?? 'body';
      const details = validationDetails(err.validation as ErrorObject[], part);
      const first = details[0];
      const message = first ? `${first.path || part} ${first.message.replace(`${part} `, '')}.` : 'The request is invalid.';
      return sendError(req, reply, new DomainError('validation_failed', message, { details }));
    }
    const mapped = err.code ? FASTIFY_CODES[err.code] : undefined;
    if (mapped) return sendError(req, reply, mapped());
    if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return sendError(req, reply, new DomainError('invalid_json', 'The request body is not valid JSON.'));
    }
    req.log.error({ err }, 'unhandled error');
    return sendError(req, reply, new DomainError('internal_error', 'Something went wrong on our side. The request id identifies it in our logs.'));
  });

  app.setNotFoundHandler((req, reply) =>
    sendError(req, reply, new DomainError('route_not_found', `No route ${req.method} ${req.url.split('?')[0]}.`)),
  );
}
