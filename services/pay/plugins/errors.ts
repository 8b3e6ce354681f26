import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pickLanguage } from '../texts.ts';
import { payPageLanguage, type PayPages } from '../pay-page-views.ts';

/** The API's codes (docs/api-conventions.md) for the framework's own refusals of a callback. */
const FRAMEWORK_ERROR_CODES: Record<number, string> = { 413: 'payload_too_large', 415: 'unsupported_media_type' };

/** Provider callbacks are answered in JSON, everything else with a page. */
const isCallback = (req: FastifyRequest): boolean => req.url.startsWith('/callbacks/');

/** A provider's callbacks are answered in the API's error envelope, with the request's id to quote. */
export const callbackError = (reply: FastifyReply, status: number, code: string, message: string): FastifyReply =>
  reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message, requestId: reply.request.id } });

/**
 * Requests Fastify refuses before routing (Fastify's `frameworkErrors`) are answered like any other: a path that
 * cannot be decoded names nothing there is; the router could not ask the database which portal a host names
 * (portal-host.ts logs why); any other refusal of the framework's is a bad request.
 */
export function payFrameworkErrors(pages: PayPages) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    reply.header('Request-Id', req.id);
    const [status, code, message] = err.code === 'FST_ERR_BAD_URL'
      ? [404, 'route_not_found', 'The request path cannot be decoded.']
      : err.code === 'FST_ERR_ASYNC_CONSTRAINT'
        ? [500, 'internal_error', 'The request could not be handled; retry later.']
        : [400, 'invalid_request', 'The request could not be read.'];
    if (isCallback(req)) void callbackError(reply, status, code, message);
    else void pages.message(reply, status, pickLanguage(undefined, req.headers['accept-language']));
  };
}

/**
 * Errors and unknown paths: callbacks get the API's JSON envelope, pages the pay page's message page. A client error
 * keeps its status (a form too large is 413); anything else is 500 and logged.
 */
export function registerErrorHandling(app: FastifyInstance, pages: PayPages): void {
  app.setNotFoundHandler((req, reply) => {
    if (isCallback(req)) return callbackError(reply, 404, 'route_not_found', 'No such callback.');
    return pages.notFound(reply, payPageLanguage(req));
  });

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'request failed');
    if (isCallback(req)) {
      const code = status === 500 ? 'internal_error' : (FRAMEWORK_ERROR_CODES[status] ?? 'invalid_request');
      return callbackError(reply, status, code, status === 500 ? 'The callback could not be handled; retry later.' : err.message);
    }
    return pages.message(reply, status, pickLanguage(undefined, req.headers['accept-language']));
  });
}
