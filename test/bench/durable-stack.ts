/**
 * The stack the dunning and subscriptions stages measure, set up the same way for both: a restate-server of its own
 * (in a temporary directory), the workflows process as production starts it (`webhooks-worker.ts` runs
 * `runWorkflows`: the housekeeping loop, the objects, its own Chromium with WORKFLOWS_RENDER_POOL pages; mail as .eml
 * files), and in the bench process the real app whose after-commit wake is the organisation's shard scheduler's `tick`
 * called request-response, so a stage knows when the rows its clock made due were claimed and sent, and how many.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { freePort } from '../../deploy/local/ports.ts';
import { startRestateServer, type RestateServer } from '../../deploy/local/restate-server.ts';
import { createChromiumRenderer, type ChromiumRenderer } from '../../activities/pdf/chromium-renderer.ts';
import { buildApp } from '../../services/api/app.ts';
import { createBusinessClock } from '../../services/clock/business-clock.ts';
import { wakeShardOf } from '../../services/clock/wake-index.ts';
import type { Wakeups } from '../../services/clock/wakeups.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { forkBenchWorker } from './worker.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * The workflows process renders with a pool of this many Chromium pages (workflows/main.ts, `createChromiumRenderer`
 * in `runWorkflows`); the stages' renderer-alone figures are measured with the same.
 */
export const WORKFLOWS_RENDER_POOL = 1;

export interface DurableStack {
  restate: RestateServer;
  /** The workflows process (its Chromium runs as its descendants). */
  worker: ChildProcess;
  db: Db;
  /** A renderer with the workflows process's pool size, for the stages' own comparison runs. */
  pdf: ChromiumRenderer;
  app: FastifyInstance;
  /** The shard scheduler's answers, by organisation: what the last tick sent, when it was asked and when it answered. */
  woke: Map<string, { woken: number; start: number; at: number }>;
  /** Undone in reverse order by `close`; a stage adds what it starts itself. */
  cleanups: (() => Promise<void>)[];
  close(): Promise<void>;
}

export async function startDurableStack(
  url: string,
  keyring: Keyring,
  opts: {
    /** The stage's name: its temporary directory, its CPU profile and the app's refusal to mail. */
    name: string;
    poolMax: number;
    /** restate-server's concurrent-invocations-limit; 0 keeps the stack's own (deploy/local/restate-server.ts). */
    invocationsLimit: number;
    masterKey: Buffer;
    profileDir?: string | undefined;
  },
): Promise<DurableStack> {
  const dir = mkdtempSync(join(tmpdir(), `faktura-bench-${opts.name}-`));
  const cleanups: (() => Promise<void>)[] = [() => Promise.resolve(rmSync(dir, { recursive: true, force: true }))];
  const close = async () => {
    while (cleanups.length) await cleanups.pop()!().catch(() => {});
  };
  try {
    const ports = { ingress: await freePort(), admin: await freePort(), fabric: await freePort() };
    const restate = await startRestateServer({
      baseDir: join(dir, 'restate'),
      ports,
      logFile: join(dir, 'restate.log'),
      ...(opts.invocationsLimit > 0 ? { env: { RESTATE_WORKER__INVOKER__CONCURRENT_INVOCATIONS_LIMIT: String(opts.invocationsLimit) } } : {}),
    });
    cleanups.push(() => restate.stop());
    const bench = await forkBenchWorker(
      join(HERE, 'webhooks-worker.ts'),
      {
        cwd: resolve(HERE, '../..'),
        execArgv: opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`, `--cpu-prof-name=${opts.name}-workflows-${process.pid}.cpuprofile`] : [],
        env: {
          ...process.env,
          NODE_ENV: 'development',
          DATABASE_URL: url,
          DB_POOL_MAX: String(opts.poolMax),
          DATA_ENCRYPTION_KEY: opts.masterKey.toString('hex'),
          // Mail becomes .eml files here (SMTP_URL unset), letters files too.
          DATA_DIR: join(dir, 'workflows'),
          SMTP_URL: '',
          LETTER_API_URL: '',
          RESTATE_INGRESS_URL: restate.ingressUrl,
          RESTATE_ADMIN_URL: restate.adminUrl,
          WORKFLOWS_PORT: '0',
          WORKFLOWS_HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
        },
      },
      'the workflows process',
      15_000,
    );
    cleanups.push(() => bench.stop());
    const worker = bench.child;

    // The API, in this process: the real app, its business clock on a pool of its own as services/api/main.ts does.
    const db = new Db(createSql(url, { max: opts.poolMax }), opts.poolMax);
    cleanups.push(() => db.close());
    const clockSql = createSql(url, { max: 2 });
    cleanups.push(() => clockSql.end({ timeout: 5 }));
    const pdf = createChromiumRenderer({ poolSize: WORKFLOWS_RENDER_POOL });
    cleanups.push(() => pdf.close());
    const woke = new Map<string, { woken: number; start: number; at: number }>();
    // The organisation's shard scheduler ticked request-response (what its BusinessClock nudges one-way in
    // production), so the stage knows when the due rows were claimed and sent, and how many.
    const wakeups: Wakeups = {
      async wakeDue(organizationId) {
        const start = performance.now();
        const res = await fetch(`${restate.ingressUrl}/WakeScheduler/${wakeShardOf(organizationId)}/tick`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: 'null',
        });
        const text = await res.text();
        if (!res.ok) throw new Error(`WakeScheduler.tick answered ${res.status}: ${text}`);
        woke.set(organizationId, { woken: (JSON.parse(text) as { sent: number }).sent, start, at: performance.now() });
      },
    };
    const app = await buildApp({
      db,
      keyring,
      pdf,
      documents: createPostgresDocumentStore(),
      clock: createBusinessClock(clockSql),
      mailDispatch: { dispatch: () => Promise.reject(new Error(`the ${opts.name} bench mails nothing through the API`)) },
      mailDomain: 'faktura.invalid',
      config: { rateLimitDefault: 0, rateLimitDocument: 0, authCacheTtlMs: 60_000, logLevel: 'warn' },
      wakeups,
    });
    cleanups.push(() => app.close());
    return { restate, worker, db, pdf, app, woke, cleanups, close };
  } catch (err) {
    await close();
    throw err;
  }
}
