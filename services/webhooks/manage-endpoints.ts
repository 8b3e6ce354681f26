import type {
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
} from '../../contracts/webhooks.ts';
import type { Clock } from '../shared/clock.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable, Tx } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { DomainError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { ENDPOINT_COLUMNS, MAX_ENDPOINTS, findEndpointOrThrow, toEndpoint, type EndpointRow } from './endpoint-queries.ts';
import { newSigningSecret, ROTATION_OVERLAP_MS } from './signing.ts';
import type { UrlVerdict } from './url-policy.ts';
import { ATTEMPTABLE_DELIVERY_STATUSES, WEBHOOK_DELIVERY_LIFECYCLE } from './webhook-delivery-lifecycle.ts';
import { wakeRows } from '../clock/wake-index.ts';

/**
 * Registers an endpoint. The URL was judged before the transaction (the check may wait for DNS); a refusal is
 * raised here so that it becomes part of the Idempotency-Key's history like any other business rejection. The
 * organisation's endpoints are counted under a transaction-scoped lock, so two concurrent creations cannot both
 * take the tenth place.
 */
export async function createEndpoint(
  tx: Tx,
  keyring: Keyring,
  organizationId: string,
  body: WebhookEndpointCreate,
  verdict: UrlVerdict,
): Promise<WebhookEndpointWithSecret> {
  if (!verdict.ok) {
    throw new DomainError('webhook_url_rejected', verdict.reason, { details: [{ path: '/url', message: verdict.reason }] });
  }
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${organizationId}`}, 0))`;
  const [count] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE organization_id = ${organizationId}`;
  if (count!.n >= MAX_ENDPOINTS) {
    throw new DomainError('webhook_endpoint_limit', `An organisation can have at most ${MAX_ENDPOINTS} webhook endpoints; delete one first.`);
  }
  const secret = newSigningSecret();
  const [row] = await tx<EndpointRow[]>`
    INSERT INTO webhook_endpoints (id, organization_id, url, event_types, description, secret_enc)
    VALUES (${uuidv7()}, ${organizationId}, ${body.url}, ${body.eventTypes}, ${body.description ?? null}, ${keyring.encrypt(secret)})
    RETURNING ${tx(ENDPOINT_COLUMNS)}`;
  return { ...toEndpoint(row!), secret };
}

/** The organisation's endpoints, newest first, keyset-paginated like every list (at most ten exist). */
export async function listEndpoints(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: { limit?: number; cursor?: string },
): Promise<{ items: WebhookEndpoint[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'webhook-endpoints', filters: [] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const rows = await sql<EndpointRow[]>`
    SELECT ${sql(ENDPOINT_COLUMNS)} FROM webhook_endpoints
    WHERE organization_id = ${organizationId} ${after ? sql`AND id < ${after}` : sql``}
    ORDER BY id DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: items.map(toEndpoint), nextCursor };
}

export async function getEndpoint(sql: Queryable, organizationId: string, id: string): Promise<WebhookEndpoint> {
  return toEndpoint(await findEndpointOrThrow(sql, organizationId, id));
}

/**
 * PATCH: event types, description, active. Deactivating stops deliveries at their next attempt (they stay pending;
 * events meanwhile are not queued, a replay fetches them). Reactivating makes every pending delivery due at once;
 * change-endpoint.ts wakes them after commit. Returns whether the endpoint was reactivated.
 */
export async function updateEndpoint(
  tx: Tx,
  clock: Clock,
  organizationId: string,
  id: string,
  patch: WebhookEndpointPatch,
): Promise<{ endpoint: WebhookEndpoint; reactivated: boolean }> {
  const before = await findEndpointOrThrow(tx, organizationId, id, { lock: true });
  const set: Record<string, unknown> = { updated_at: new Date() };
  if (patch.eventTypes !== undefined) set.event_types = patch.eventTypes;
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.active !== undefined) set.active = patch.active;
  const [row] = await tx<EndpointRow[]>`
    UPDATE webhook_endpoints SET ${tx(set)} WHERE organization_id = ${organizationId} AND id = ${id}
    RETURNING ${tx(ENDPOINT_COLUMNS)}`;
  const reactivated = !before.active && row!.active;
  if (reactivated) {
    const due = await clock.now(organizationId);
    await tx`
      UPDATE webhook_deliveries SET next_attempt_at = ${due}, claimed_by = NULL, claimed_until = NULL, updated_at = now()
      WHERE endpoint_id = ${id} AND status IN ${WEBHOOK_DELIVERY_LIFECYCLE.in(tx, ATTEMPTABLE_DELIVERY_STATUSES)}`;
    await wakeRows.list(
      tx,
      { service: 'WebhookDelivery', handler: 'wake' },
      tx`SELECT id::text, organization_id, next_attempt_at FROM webhook_deliveries
         WHERE endpoint_id = ${id} AND status IN ${WEBHOOK_DELIVERY_LIFECYCLE.in(tx, ATTEMPTABLE_DELIVERY_STATUSES)}`,
      'move',
    );
  }
  return { endpoint: toEndpoint(row!), reactivated };
}

/** DELETE is final: the endpoint, its deliveries (queued ones disappear) and their attempts go. */
export async function deleteEndpoint(tx: Tx, organizationId: string, id: string): Promise<void> {
  await findEndpointOrThrow(tx, organizationId, id, { lock: true });
  await wakeRows.clear(tx, 'WebhookDelivery', tx`SELECT id::text FROM webhook_deliveries WHERE endpoint_id = ${id}`);
  // Found and locked above: the row is there to delete.
  await tx`DELETE FROM webhook_endpoints WHERE organization_id = ${organizationId} AND id = ${id}`;
}

/**
 * A new signing secret. The current one becomes the previous one and keeps signing for 24 hours (real time, like
 * webhook-timestamp); a secret that was still in an earlier overlap is dropped.
 */
export async function rotateSecret(tx: Tx, keyring: Keyring, organizationId: string, id: string): Promise<WebhookEndpointWithSecret> {
  await findEndpointOrThrow(tx, organizationId, id, { lock: true });
  const secret = newSigningSecret();
  const [row] = await tx<EndpointRow[]>`
    UPDATE webhook_endpoints
    SET previous_secret_enc = secret_enc,
        previous_secret_expires_at = now() + make_interval(secs => ${ROTATION_OVERLAP_MS / 1000}),
        secret_enc = ${keyring.encrypt(secret)},
        updated_at = now()
    WHERE organization_id = ${organizationId} AND id = ${id}
    RETURNING ${tx(ENDPOINT_COLUMNS)}`;
  return { ...toEndpoint(row!), secret };
}
