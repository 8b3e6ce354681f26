/**
 * A one-way call through Restate's ingress (`POST …/send`, answered 202): hands work to a durable handler without
 * waiting for it. `path` is `Service/handler` or `Object/<key>/handler` (the caller encodes the key). With an
 * idempotency key, Restate accepts a repeated hand-off once. Every post-commit hand-off of the services uses this.
 */
export async function sendToRestate(
  ingressUrl: string,
  path: string,
  what: string,
  opts: { body?: unknown; idempotencyKey?: string } = {},
): Promise<void> {
  const res = await fetch(`${ingressUrl.replace(/\/+$/, '')}/${path}/send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}) },
    body: JSON.stringify(opts.body ?? null),
    signal: AbortSignal.timeout(5000),
  });
  if (res.status !== 202 && res.status !== 200) throw new Error(`Restate refused the ${what}: ${res.status} ${await res.text()}`);
}
