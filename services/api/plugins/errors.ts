import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { DomainError } from '../../../services/shared/errors.ts';
import { errorBody, pointerToken, validationFailure } from '../../../services/shared/error-envelope.ts';
import { randomToken } from '../../../services/shared/crypto.ts';
import { loggableError, requestValues } from '../../../services/shared/loggable-error.ts';

export function sendError(req: FastifyRequest, reply: FastifyReply, err: DomainError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  if (err.code === 'unauthenticated') reply.header('WWW-Authenticate', 'Bearer');
  return reply.code(err.status).send(errorBody(req, err));
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
