import type { WebhookEndpoint } from '../../contracts/webhooks.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';

export interface EndpointRow {
  id: string;
  organization_id: string;
  url: string;
  event_types: string[];
  description: string | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Everything but the secrets, which only the signing step and the create/rotate answers ever read. */
export const ENDPOINT_COLUMNS = ['id', 'organization_id', 'url', 'event_types', 'description', 'active', 'created_at', 'updated_at'] as const;

/**
 * Endpoints per organisation: the eleventh is `422 webhook_endpoint_limit` (docs/api-conventions.md, "Events, webhooks
 * and the test clock").
 */
export const MAX_ENDPOINTS = 10;

export const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  url: r.url,
  eventTypes: r.event_types,
  description: r.description,
  active: r.active,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export const endpointNotFound = () => notFound('webhook_endpoint_not_found', 'webhook endpoint');

/** The organisation's endpoint, or the neutral 404 for unknown, malformed and foreign ids alike. */
export async function findEndpointOrThrow(sql: Queryable, organizationId: string, id: string, opts: { lock?: boolean } = {}): Promise<EndpointRow> {
  if (!isUuid(id)) throw endpointNotFound();
  const [row] = await sql<EndpointRow[]>`
    SELECT ${sql(ENDPOINT_COLUMNS)} FROM webhook_endpoints
    WHERE organization_id = ${organizationId} AND id = ${id}
    ${opts.lock ? sql`FOR UPDATE` : sql``}`;
  if (!row) throw endpointNotFound();
  return row;
}
