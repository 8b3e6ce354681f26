import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorBody } from '../../contracts/common.ts';
import { isMutating } from './idempotency.ts';
import { isNoProperties } from './validation.ts';

/**
 * The OpenAPI 3.1 document is generated from the routes' own TypeBox contracts, so it cannot drift from what the
 * validators enforce. Each operation also lists its scope, the Idempotency-Key header where required, and the
 * error responses every route shares.
 */
const ERROR_RESPONSES: Record<string, string> = {
  '400': 'Invalid request: invalid_json, validation_failed, idempotency_key_missing, idempotency_key_invalid, invalid_cursor',
  '401': 'unauthenticated: missing, malformed, unknown or revoked API key',
  '403': 'insufficient_scope: the key lacks the scope this operation requires',
  '404': 'Not found: the id is unknown or belongs to another organisation',
  '409': 'idempotency_conflict or idempotency_in_progress (mutations)',
  '413': 'payload_too_large',
  '415': 'unsupported_media_type: bodies must be application/json',
  '422': 'A business rule refused the request (see the error code)',
  '429': 'rate_limited: see Retry-After and RateLimit-* headers',
  '500': 'internal_error',
};

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Faktura API',
        version: '1.0.0',
        description:
          'Headless API for invoicing, payments, reminders and debt collection for Danish businesses. ' +
          'Amounts are integer øre; dates are YYYY-MM-DD; every mutating call needs an Idempotency-Key.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: sk_live_… or sk_test_…' } },
      },
      // The default (spec 5.1): bearer authentication. Each scoped operation names its scope; the few open ones
      // (health, this document) say they need none.
      security: [{ bearerAuth: [] }],
    },
    hideUntagged: false,
    // A body whose fields are all optional may be left out (POST …/issue, a PATCH): its requestBody is not required.
    transformObject: (doc) => {
      const spec = ('openapiObject' in doc ? doc.openapiObject : doc.swaggerObject) as {
        paths?: Record<string, Record<string, { requestBody?: { required?: boolean; content?: Record<string, { schema?: { required?: unknown[] } }> } }>>;
      };
      for (const ops of Object.values(spec.paths ?? {})) {
        for (const op of Object.values(ops)) {
          const body = op.requestBody;
          const schema = body?.content?.['application/json']?.schema;
          if (body && schema && !(schema.required && schema.required.length > 0)) body.required = false;
        }
      }
      return spec;
    },
    transform: ({ schema, url, route }) => {
      const scope = route.config?.scope;
      if (!scope) return { schema: { ...(schema as Record<string, unknown>), security: [] }, url };
      const s = { ...(schema as Record<string, unknown>) };
      // The strict defaults for "takes nothing" are not parameters or bodies a client should send.
      if (isNoProperties(s.body)) delete s.body;
      if (isNoProperties(s.querystring)) delete s.querystring;
      s.security = [{ bearerAuth: [scope] }];
      s['x-required-scope'] = scope;
      s.description = `${(s.description as string | undefined) ?? ''}${s.description ? '\n\n' : ''}Requires scope \`${scope}\`.`;
      const responses = { ...((s.response as Record<string, unknown> | undefined) ?? {}) };
      for (const [code, description] of Object.entries(ERROR_RESPONSES)) {
        if (!isMutating(route.method) && (code === '409' || code === '413' || code === '415')) continue;
        responses[code] ??= { ...ErrorBody, description };
      }
      s.response = responses;
      if (isMutating(route.method)) {
        const headers = (s.headers as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} };
        const props = { ...((headers as { properties?: Record<string, unknown> }).properties ?? {}) };
        props['idempotency-key'] = { type: 'string', minLength: 8, maxLength: 128, description: 'One key per logical operation' };
        s.headers = { ...headers, properties: props, required: ['idempotency-key'] };
      }
      return { schema: s, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
