import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope } from '../../../../contracts/common.ts';
import { EventEnvelope } from '../../../../contracts/events.ts';
import {
  ReplayBody,
  ReplayResult,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointListQuery,
  WebhookEndpointParams,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
} from '../../../../contracts/webhooks.ts';
import { checkWebhookUrl } from '../../../webhooks/url-policy.ts';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret } from '../../../webhooks/manage-endpoints.ts';
import { changeEndpoint } from '../../../webhooks/change-endpoint.ts';
import { pingEndpoint } from '../../../webhooks/ping-endpoint.ts';
import { replayDeliveries } from '../../../webhooks/replay-deliveries.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const tags = ['Webhooks'];
type Params = { endpointId: string };

export function webhookRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;
  const policy = { allowLoopback: deps.webhooks?.allowLoopback ?? false };

  app.get<{ Querystring: WebhookEndpointListQuery }>(
    '/webhook-endpoints',
    {
      config: { scope: 'webhooks:manage' },
      schema: {
        summary: 'List webhook endpoints, newest first',
        description: 'The organisation’s endpoints (at most 10); secrets are never listed.',
        tags,
        querystring: WebhookEndpointListQuery,
        response: { 200: ListEnvelope(WebhookEndpoint) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listEndpoints(sql, keyring, req.auth.organizationId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Body: WebhookEndpointCreate }>(
    '/webhook-endpoints',
    {
      config: { scope: 'webhooks:manage' },
      schema: {
        summary: 'Register a webhook endpoint',
        description:
          'HTTPS only, no credentials in the URL, no private, loopback, link-local, multicast, CGNAT, unique-local or ' +
          'cloud-metadata destination (422 `webhook_url_rejected`); at most 10 per organisation (422 ' +
          '`webhook_endpoint_limit`). The signing secret (`whsec_…`) is in this response only.',
        tags,
        body: WebhookEndpointCreate,
        response: { 201: Envelope(WebhookEndpointWithSecret) },
      },
    },
    async (req, reply) => {
      // Judged before the transaction: resolving the host name may take a moment.
      const verdict = await checkWebhookUrl(req.body.url, policy, deps.webhooks?.resolve);
      return mutate(deps, req, reply, async (tx) => {
        const endpoint = await createEndpoint(tx, keyring, req.auth.organizationId, req.body, verdict);
        return { status: 201, data: endpoint, location: `/v1/webhook-endpoints/${endpoint.id}` };
      });
    },
  );

  app.get<{ Params: Params }>(
    '/webhook-endpoints/:endpointId',
    {
      config: { scope: 'webhooks:manage' },
      schema: { summary: 'Get a webhook endpoint', tags, params: WebhookEndpointParams, response: { 200: Envelope(WebhookEndpoint) } },
    },
    async (req) => ({ data: await db.read((sql) => getEndpoint(sql, req.auth.organizationId, req.params.endpointId)), meta: {} }),
  );

  app.patch<{ Params: Params; Body: WebhookEndpointPatch }>(
    '/webhook-endpoints/:endpointId',
    {
      config: { scope: 'webhooks:manage' },
      schema: {
        summary: 'Update a webhook endpoint (partial)',
        description:
          '`eventTypes`, `active`, `description`; `url` cannot change (400). An inactive endpoint receives nothing and ' +
          'its events are not queued (a replay fetches them); reactivating it sends its pending deliveries at once.',
        tags,
        params: WebhookEndpointParams,
        body: WebhookEndpointPatch,
        response: { 200: Envelope(WebhookEndpoint) },
      },
    },
    (req, reply) => mutate(deps, req, reply, changeEndpoint(deps, req.auth.organizationId, req.params.endpointId, req.body, req.log)),
  );

  app.delete<{ Params: Params }>(
    '/webhook-endpoints/:endpointId',
    {
      config: { scope: 'webhooks:manage' },
      schema: {
        summary: 'Delete a webhook endpoint',
        description: 'Final: the endpoint and its queued deliveries disappear.',
        tags,
        params: WebhookEndpointParams,
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => {
        await deleteEndpoint(tx, req.auth.organizationId, req.params.endpointId);
        return { status: 204 };
      }),
  );

  app.post<{ Params: Params }>(
    '/webhook-endpoints/:endpointId/rotate-secret',
    {
      config: { scope: 'webhooks:manage' },
      schema: {
        summary: 'Rotate the signing secret',
        description: 'Returns the new secret once. The previous secret keeps signing for 24 hours: deliveries then carry two signatures.',
        tags,
        params: WebhookEndpointParams,
        response: { 200: Envelope(WebhookEndpointWithSecret) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await rotateSecret(tx, keyring, req.auth.organizationId, req.params.endpointId),
      })),
  );

  app.post<{ Params: Params }>(
    '/webhook-endpoints/:endpointId/test',
    {
      config: { scope: 'webhooks:manage' },
      schema: {
        summary: 'Send a test ping',
        description: 'Queues a signed `webhook.ping` with no real data for this endpoint (202); the body is the ping as it will be delivered.',
        tags,
        params: WebhookEndpointParams,
        response: { 202: Envelope(EventEnvelope) },
      },
    },
    (req, reply) => mutate(deps, req, reply, pingEndpoint(deps, req.auth.organizationId, req.params.endpointId, req.log)),
  );

  app.post<{ Params: Params; Body: ReplayBody }>(
    '/webhook-endpoints/:endpointId/replay',
    {
      config: { scope: 'webhooks:manage' },
      schema: {
        summary: 'Replay deliveries since a point in time',
        description:
          'Re-queues failed and given-up deliveries and enqueues events never queued for this endpoint (created later, ' +
          'inactive), oldest first; delivered events are never re-sent. At most 90 days back (422 ' +
          '`replay_window_exceeded`) and 10,000 per call: `possiblyMore` asks for another call.',
        tags,
        params: WebhookEndpointParams,
        body: ReplayBody,
        response: { 200: Envelope(ReplayResult) },
      },
    },
    (req, reply) => mutate(deps, req, reply, replayDeliveries(deps, req.auth.organizationId, req.params.endpointId, req.body.since, req.log)),
  );
}
