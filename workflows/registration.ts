/**
 * Registration of the workflows endpoint with restate-server, and the start of the housekeeping loop: what a boot
 * of the workflows process (or of `npm start`) asks of the engine's admin and ingress APIs.
 */
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as clients from '@restatedev/restate-sdk-clients';
import { HOUSEKEEPING_JOBS, type HousekeepingJob } from '../contracts/workflows.ts';
import { HOUSEKEEPING, IDEMPOTENCY_JOB, type Housekeeping, type RunResult } from './housekeeping.ts';
import { nudgeAllShards } from '../services/clock/wakeups.ts';
import { createEngineClient } from '../services/shared/engine-client.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// ---------------------------------------------------------------------------------------------------------------
// Registration

/**
 * Hash of the sources that define the endpoint's services and what they do. Registration stores it in the
 * deployment's metadata; the next registration of the same URI compares it to decide whether `force` is needed.
 */
export function workflowsSourceHash(root: string = ROOT): string {
  const hash = createHash('sha256');
  for (const dir of ['workflows', 'activities']) {
    for (const file of listSources(join(root, dir))) {
      hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
    }
  }
  return hash.digest('hex');
}

function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listSources(path));
    else if (/\.(ts|js|mjs)$/.test(entry.name)) out.push(path);
  }
  return out;
}

interface DeploymentSummary {
  id: string;
  uri?: string;
  metadata?: Record<string, string>;
  services?: { name: string }[];
}

export interface Registration {
  deploymentId: string;
  /** True when the same URI had been registered with other code and was overwritten. */
  forced: boolean;
  sourceHash: string;
}

const ADMIN_TIMEOUT_MS = 10_000;

const sameUri = (a: string, b: string): boolean => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');

/**
 * Registers the endpoint. Re-registering a URI without `force` returns 200 but changes nothing: after a code change
 * Restate keeps the old schema (guide §7.5 #3), and if another deployment registered since then, the services keep
 * routing to that one. So `force` is set exactly when the stored source hash differs or a service of this URI's
 * deployment routes elsewhere; otherwise re-registration is a no-op.
 */
export async function registerDeployment(adminUrl: string, uri: string, sourceHash: string = workflowsSourceHash()): Promise<Registration> {
  return withRetries(`register ${uri} with ${adminUrl}`, async () => {
    const listed = await fetch(`${adminUrl}/deployments`, { signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
    if (!listed.ok) throw new Error(`GET /deployments answered ${listed.status}: ${await listed.text()}`);
    const { deployments } = (await listed.json()) as { deployments: DeploymentSummary[] };
    const previous = deployments.find((d) => d.uri !== undefined && sameUri(d.uri, uri));
    const force = previous !== undefined && (previous.metadata?.sourceHash !== sourceHash || (await routedElsewhere(adminUrl, previous)));
    const res = await fetch(`${adminUrl}/deployments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uri, force, metadata: { sourceHash } }),
      // Registration makes Restate call the endpoint for its service list; that takes well under a second.
      signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`POST /deployments answered ${res.status}: ${await res.text()}`);
    const body = (await res.json()) as { id: string };
    return { deploymentId: body.id, forced: force, sourceHash };
  });
}

async function routedElsewhere(adminUrl: string, deployment: DeploymentSummary): Promise<boolean> {
  for (const { name } of deployment.services ?? []) {
    const res = await fetch(`${adminUrl}/services/${encodeURIComponent(name)}`, { signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`GET /services/${name} answered ${res.status}: ${await res.text()}`);
    if (((await res.json()) as { deployment_id?: string }).deployment_id !== deployment.id) return true;
  }
  return false;
}

/**
 * Arms the housekeeping loop (every job of contracts/workflows.ts) and every wake shard's scheduler. The object ignores a start while armed, so every
 * boot of every replica may send it; the idempotency key only makes this boot's retries of the send count once.
 * Returns the send of the idempotency job (the others are sent alike). Tests of one job start only that one.
 */
export async function startHousekeeping(
  ingressUrl: string,
  idempotencyKey = `housekeeping-start:${randomUUID()}`,
  jobs: readonly HousekeepingJob[] = HOUSEKEEPING_JOBS,
): Promise<clients.Send<RunResult>> {
  const ingress = clients.connect({ url: ingressUrl });
  const startJob = (job: string) =>
    withRetries(`start ${HOUSEKEEPING}/${job}`, () =>
      ingress.objectSendClient<Housekeeping>({ name: HOUSEKEEPING }, job).start(clients.rpc.sendOpts({ idempotencyKey: `${idempotencyKey}:${job}` })),
    );
  const sends = await Promise.all(jobs.map(startJob));
  // Every shard's scheduler arms its timer to its earliest row (a nudge only ever moves a timer earlier).
  await withRetries('nudge the wake shards', () => nudgeAllShards(createEngineClient(ingressUrl), `${idempotencyKey}:wake`));
  return sends[Math.max(0, jobs.indexOf(IDEMPOTENCY_JOB))]!;
}

/** Restate may be finishing its own start, or not yet routing to a just-registered service: a few short retries. */
async function withRetries<T>(what: string, fn: () => Promise<T>, attempts = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= attempts) throw new Error(`cannot ${what}: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, Math.min(100 * i, 1000)));
    }
  }
}

