import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * `<DATA_DIR>/runtime.json`: where the local stack runs. The operator command reads `databaseUrl` from it, so it is
 * written as soon as the database is migrated, before anything else starts. It stays after a stop, because the
 * next start reuses its ports (stable URLs for bookmarks of the API, the docs and the Restate UI).
 *
 * Written atomically (temp file + rename): a reader sees the old or the new file, never half of one. Mode 0600,
 * because a DATABASE_URL given by the operator may carry a password.
 */
export interface RuntimePorts {
  /** null when DATABASE_URL named an external database. */
  postgres: number | null;
  /** null when RESTATE_INGRESS_URL and RESTATE_ADMIN_URL named an external Restate. */
  restateIngress: number | null;
  restateAdmin: number | null;
  restateFabric: number | null;
  /** null when REDIS_URL named an external Redis. */
  redis: number | null;
  workflows: number;
  api: number;
  /** The hosted pay page. */
  pay: number;
  /** `npm start`'s metrics listener (GET /metrics); absent in files of older starts and of `start:cluster`. */
  metrics?: number;
}

export interface RuntimeInfo {
  /** `starting` until every part answers, `running`, then `stopped` after a clean stop. */
  status: 'starting' | 'running' | 'stopped';
  dataDir: string;
  databaseUrl: string;
  restateIngressUrl: string;
  restateAdminUrl: string;
  workflowsUrl: string;
  /** The shared limiter store (REDIS_URL, else the private redis-server's address). */
  redisUrl: string;
  apiUrl: string;
  /** The pay page's base URL (PAY_BASE_URL, else its own address). */
  payUrl: string;
  ports: RuntimePorts;
  /** The `npm start` process. */
  pid: number;
  /** Child processes it started (null when that part is external), so that an unclean exit can be cleaned up. */
  pids: { postgres: number | null; restateServer: number | null; redisServer: number | null };
  startedAt: string;
  stoppedAt: string | null;
  /** `npm run start:cluster` only: every process it started, so that the next start can stop what an unclean exit left. */
  cluster?: ClusterRuntime;
}

export interface ClusterRuntime {
  processes: { name: string; kind: string; pid: number | null; url: string; ports: Record<string, number>; logFile: string }[];
  /** The Restate nodes' node-to-node addresses (what `restatectl --address` takes). */
  restateFabric: string[];
  /** Each HAProxy process's stats page port. */
  proxyStats: Record<string, number>;
}

export const runtimeFilePath = (dataDir: string): string => resolve(dataDir, 'runtime.json');

export function writeRuntimeFile(dataDir: string, info: RuntimeInfo): void {
  const path = runtimeFilePath(dataDir);
  mkdirSync(resolve(dataDir), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** The last start's file, or undefined when there is none or it cannot be parsed (it is then rewritten). */
export function readRuntimeFile(dataDir: string): Partial<RuntimeInfo> | undefined {
  let text: string;
  try {
    text = readFileSync(runtimeFilePath(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A port remembered from the last start, if the file holds a plausible one. */
export function rememberedPort(previous: Partial<RuntimeInfo> | undefined, name: keyof RuntimePorts): number | undefined {
  const port = previous?.ports?.[name];
  return typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}
