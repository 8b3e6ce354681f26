import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { ErrorBody } from '../../contracts/common.ts';
import { isMutating } from './idempotency.ts';
import { isNoProperties } from './no-properties.ts';

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

/**
 * Every operation's `operationId`, by method and route URL: stable names for code generators (a generated client's
 * method names), chosen here rather than derived from paths so that they survive a URL change. A route missing
 * from this table has no `operationId`, which test/http/openapi.test.ts refuses.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'GET /v1': 'getDiscovery',
  'GET /v1/customers': 'listCustomers',
  'POST /v1/customers': 'createCustomer',
  'GET /v1/customers/:customerId': 'getCustomer',
  'PATCH /v1/customers/:customerId': 'updateCustomer',
  'GET /v1/customers/:customerId/balance': 'getCustomerBalance',
  'GET /v1/customers/:customerId/departments': 'listDepartments',
  'POST /v1/customers/:customerId/departments': 'createDepartment',
  'DELETE /v1/customers/:customerId/departments/:departmentId': 'deleteDepartment',
  'GET /v1/products': 'listProducts',
  'POST /v1/products': 'createProduct',
  'GET /v1/products/:productId': 'getProduct',
  'PATCH /v1/products/:productId': 'updateProduct',
  'GET /v1/accounts': 'listAccounts',
  'POST /v1/accounts': 'createAccount',
  'GET /v1/invoices': 'listInvoices',
  'POST /v1/invoices': 'createInvoice',
  'GET /v1/invoices/:invoiceId': 'getInvoice',
  'PUT /v1/invoices/:invoiceId': 'replaceInvoice',
  'DELETE /v1/invoices/:invoiceId': 'deleteInvoice',
  'POST /v1/invoices/:invoiceId/issue': 'issueInvoice',
  'POST /v1/invoices/:invoiceId/send': 'sendInvoice',
  'GET /v1/invoices/:invoiceId/pdf': 'getInvoicePdf',
  'GET /v1/invoices/:invoiceId/einvoice': 'getInvoiceEInvoice',
  'GET /v1/invoices/:invoiceId/timeline': 'getInvoiceTimeline',
  'POST /v1/invoices/:invoiceId/credit': 'creditInvoice',
  'GET /v1/invoices/:invoiceId/payments': 'listInvoicePayments',
  'POST /v1/invoices/:invoiceId/payments': 'registerPayment',
  'GET /v1/invoices/:invoiceId/payment-link': 'getPaymentLink',
  'POST /v1/invoices/:invoiceId/payment-link': 'createPaymentLink',
  'GET /v1/creditnotes': 'listCreditNotes',
  'GET /v1/creditnotes/:creditNoteId': 'getCreditNote',
  'GET /v1/creditnotes/:creditNoteId/pdf': 'getCreditNotePdf',
  'GET /v1/creditnotes/:creditNoteId/einvoice': 'getCreditNoteEInvoice',
  'GET /v1/payments': 'listPayments',
  'GET /v1/payments/:paymentId': 'getPayment',
  'GET /v1/payments/:paymentId/receipt': 'getPaymentReceipt',
  'GET /v1/webhook-endpoints': 'listWebhookEndpoints',
  'POST /v1/webhook-endpoints': 'createWebhookEndpoint',
  'GET /v1/webhook-endpoints/:endpointId': 'getWebhookEndpoint',
  'PATCH /v1/webhook-endpoints/:endpointId': 'updateWebhookEndpoint',
  'DELETE /v1/webhook-endpoints/:endpointId': 'deleteWebhookEndpoint',
  'POST /v1/webhook-endpoints/:endpointId/rotate-secret': 'rotateWebhookEndpointSecret',
  'POST /v1/webhook-endpoints/:endpointId/test': 'testWebhookEndpoint',
  'POST /v1/webhook-endpoints/:endpointId/replay': 'replayWebhookDeliveries',
  'GET /v1/events': 'listEvents',
  'GET /v1/test-clock': 'getTestClock',
  'POST /v1/test-clock/advance': 'advanceTestClock',
  'GET /v1/reminder-settings': 'getReminderSettings',
  'PUT /v1/reminder-settings': 'replaceReminderSettings',
  'GET /v1/reference-rates': 'listReferenceRates',
  'GET /v1/invoices/:invoiceId/reminders': 'listInvoiceReminders',
  'POST /v1/invoices/:invoiceId/reminders': 'sendInvoiceReminder',
  'POST /v1/cases': 'createCase',
  'GET /v1/cases/:caseId': 'getCase',
  'POST /v1/invoices/:invoiceId/collect': 'collectInvoice',
  'POST /v1/invoices/:invoiceId/payment-plan': 'createPaymentPlan',
  'GET /v1/invoices/:invoiceId/payment-plan': 'getPaymentPlan',
  'POST /v1/invoices/:invoiceId/payment-plan/cancel': 'cancelPaymentPlan',
  'POST /v1/betingelse-accept': 'acceptTerms',
  'GET /v1/reminder-flows': 'listReminderFlows',
  'POST /v1/reminder-flows': 'createReminderFlowVersion',
  'GET /v1/reminder-flows/:flowKey/versions/:version': 'getReminderFlowVersion',
  'POST /v1/reminder-flows/:flowKey/versions/:version/approve': 'approveReminderFlowVersion',
  'POST /v1/reminder-flows/:flowKey/versions/:version/activate': 'activateReminderFlowVersion',
  'GET /v1/subscriptions': 'listSubscriptions',
  'POST /v1/subscriptions': 'createSubscription',
  'GET /v1/subscriptions/:subscriptionId': 'getSubscription',
  'PATCH /v1/subscriptions/:subscriptionId': 'updateSubscription',
  'POST /v1/subscriptions/:subscriptionId/pause': 'pauseSubscription',
  'POST /v1/subscriptions/:subscriptionId/resume': 'resumeSubscription',
  'POST /v1/subscriptions/:subscriptionId/cancel': 'cancelSubscription',
  'POST /v1/subscriptions/:subscriptionId/run': 'runSubscription',
  'GET /v1/subscriptions/:subscriptionId/invoices': 'listSubscriptionInvoices',
  'GET /v1/subscriptions/:subscriptionId/next_invoice': 'previewSubscriptionInvoice',
  'POST /v1/batch': 'runBatch',
  'GET /v1/roles': 'listRoles',
  'GET /v1/members': 'listMembers',
  'PATCH /v1/members/:userId': 'updateMemberRole',
  'GET /v1/settings': 'getSettings',
  'GET /v1/branding': 'getBranding',
  'PUT /v1/branding/logo': 'uploadLogo',
  'DELETE /v1/branding/logo': 'deleteLogo',
  'GET /v1/settlements': 'listSettlements',
  'GET /v1/payment-domain': 'getPaymentDomain',
  'PUT /v1/payment-domain': 'setPaymentDomain',
  'POST /v1/payment-domain/verify': 'verifyPaymentDomain',
  'GET /v1/customer-portal': 'getCustomerPortal',
  'PATCH /v1/customer-portal': 'updateCustomerPortal',
  'POST /v1/customer-portal/verify-domain': 'verifyCustomerPortalDomain',
  'POST /v1/verification-sessions': 'createVerificationSession',
  'POST /v1/card-setup-sessions': 'createCardSetupSession',
  'POST /v1/accounting-connections': 'createAccountingConnection',
  'POST /v1/bank-statements': 'importBankStatement',
  'GET /v1/bank-statements/:statementId': 'getBankStatement',
  'GET /v1/bank-statements/:statementId/entries': 'listBankStatementEntries',
  'POST /v1/bank-statement-entries/:entryId/match': 'matchBankStatementEntry',
};

/** The `operationId` of a route, from the table above. */
const operationIdOf = (method: string | string[], url: string): string | undefined => {
  const verb = [method].flat().find((m) => m !== 'HEAD');
  return verb ? OPERATION_IDS[`${verb} ${url.replace(/\/$/, '') || '/'}`] : undefined;
};

export interface OpenApiOptions {
  /**
   * The API's public base URL (PUBLIC_API_URL; `npm start` uses its own address), named as the document's server.
   * Unset, the server is `/`: the origin the document itself was fetched from.
   */
  publicApiUrl?: string | undefined;
}

export async function registerOpenApi(app: FastifyInstance, opts: OpenApiOptions = {}): Promise<void> {
  const server = opts.publicApiUrl
    ? { url: opts.publicApiUrl.replace(/\/+$/, ''), description: 'This API' }
    : { url: '/', description: 'This API, at the origin this document was fetched from' };
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      servers: [server],
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
      // The default: bearer authentication (docs/api-conventions.md, "Authentication, scopes, rate limits"). Each
      // scoped operation names its scope; the few open ones (health, this document) say they need none.
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
      hoistNamedSchemas(spec);
      return spec;
    },
    transform: ({ schema, url, route }) => {
      const scope = route.config?.scope;
      const operationId = operationIdOf(route.method, url);
      const named: Record<string, unknown> = operationId ? { operationId } : {};
      if (!scope && !route.config?.scopesPerOperation) return { schema: { ...(schema as Record<string, unknown>), ...named, security: [] }, url };
      const s: Record<string, unknown> = { ...(schema as Record<string, unknown>), ...named };
      // The strict defaults for "takes nothing" are not parameters or bodies a client should send.
      if (isNoProperties(s.body)) delete s.body;
      if (isNoProperties(s.querystring)) delete s.querystring;
      s.security = [{ bearerAuth: scope ? [scope] : [] }];
      if (scope) s['x-required-scope'] = scope;
      const needs = scope ? `Requires scope \`${scope}\`.` : 'Scopes are checked per operation.';
      s.description = `${(s.description as string | undefined) ?? ''}${s.description ? '\n\n' : ''}${needs}`;
      const responses = { ...((s.response as Record<string, unknown> | undefined) ?? {}) };
      for (const [code, description] of Object.entries(ERROR_RESPONSES)) {
        if (!isMutating(route.method) && (code === '409' || code === '413' || code === '415')) continue;
        // The response's description goes beside the schema, so that every error response refers to one Error schema.
        responses[code] ??= { ...ErrorBody, [RESPONSE_DESCRIPTION]: description };
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

/** @fastify/swagger's key for a response description kept apart from the response's schema. */
const RESPONSE_DESCRIPTION = 'x-response-description';

/** Keywords whose values are data, not schemas: a `title` inside them names nothing. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'example', 'examples']);

/** A schema title as a component name: `Customer` stays, `Event (invoice)` becomes `EventInvoice`. */
export const componentName = (title: string): string =>
  title
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/**
 * Every schema with a `title` (the contracts name their resources: Customer, Invoice, Payment, Error, …) moves to
 * `components.schemas` under that name, once, and each place it was used refers to it with `$ref`; nested named
 * schemas become references inside their component too. A request body's own schema stays where it is (each
 * belongs to one operation; what it nests is shared all the same). Only the document changes: the routes validate
 * and serialise with their schemas as written. Two different schemas under one name are a mistake in the contracts
 * and fail the document (test/http/openapi.test.ts builds it).
 */
function hoistNamedSchemas(spec: { paths?: Record<string, Record<string, object>>; components?: { schemas?: Record<string, unknown> } }): void {
  const found = new Map<string, { schema: Record<string, unknown>; json: string }>();
  const visit = (node: unknown, keep: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => visit(item, false));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) out[key] = DATA_KEYWORDS.has(key) ? value : visit(value, false);
    if (keep || typeof out.title !== 'string') return out;
    const name = componentName(out.title);
    const json = JSON.stringify(out);
    const earlier = found.get(name);
    if (earlier && earlier.json !== json) throw new Error(`OpenAPI: two different schemas are named ${name} (title "${out.title}")`);
    found.set(name, { schema: out, json });
    return { $ref: `#/components/schemas/${name}` };
  };
  for (const ops of Object.values(spec.paths ?? {})) {
    for (const [method, op] of Object.entries(ops)) {
      const next: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(op)) {
        if (key !== 'requestBody') {
          next[key] = visit(value, false);
          continue;
        }
        const body = value as { content?: Record<string, { schema?: unknown }> };
        const content: Record<string, unknown> = {};
        for (const [type, media] of Object.entries(body.content ?? {})) content[type] = { ...media, schema: visit(media.schema, true) };
        next[key] = { ...body, ...(body.content ? { content } : {}) };
      }
      ops[method] = next;
    }
  }
  const schemas: Record<string, unknown> = { ...(spec.components?.schemas ?? {}) };
  for (const name of [...found.keys()].sort()) schemas[name] = found.get(name)!.schema;
  spec.components = { ...spec.components, schemas };
}
