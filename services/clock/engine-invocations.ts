import type { ClaimedWake } from './wake-index.ts';

/**
 * Which wake-index targets the engine still has an invocation for (running, queued, backing off, paused or
 * suspended): read from restate-server's own introspection (`POST <admin>/query`, its SQL over `sys_invocation`).
 * The housekeeping backstop asks this about old claims, so a claim whose invocation was killed is released within a
 * couple of minutes instead of waiting for the lease. Keys are UUIDs and `<uuid>:<uuid>` pairs; anything else is
 * refused rather than put into the query.
 */
export type OpenInvocations = (claims: Pick<ClaimedWake, 'service' | 'key'>[]) => Promise<Set<string>>;

const SAFE = /^[A-Za-z0-9:-]{1,100}$/;

export const invocationRef = (t: { service: string; key: string }): string => `${t.service}/${t.key}`;

export function restateOpenInvocations(adminUrl: string, timeoutMs = 10_000): OpenInvocations {
  return async (claims) => {
    const open = new Set<string>();
    if (claims.length === 0) return open;
    for (const c of claims) if (!SAFE.test(c.service) || !SAFE.test(c.key)) throw new Error(`not a wake-index target: ${c.service}/${c.key}`);
    const keys = [...new Set(claims.map((c) => `'${c.key}'`))].join(', ');
    const services = [...new Set(claims.map((c) => `'${c.service}'`))].join(', ');
    const res = await fetch(`${adminUrl.replace(/\/+$/, '')}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        query: `SELECT target_service_name AS service, target_service_key AS key FROM sys_invocation
                WHERE status <> 'completed' AND target_service_name IN (${services}) AND target_service_key IN (${keys})`,
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) throw new Error(`the engine's invocation query answered ${res.status}: ${await res.text()}`);
    for (const row of ((await res.json()) as { rows: { service: string; key: string }[] }).rows) open.add(invocationRef(row));
    return open;
  };
}
