/**
 * The stack the drill runs against, with the handles it needs to break it: every process by name, a SIGKILL of one,
 * and a restart as a supervisor would make it.
 *
 * For now: embedded PostgreSQL, one restate-server, and one API and one workflows process as the standalone commands
 * (`start:api`, `start:workflows`) run them, each a child of the drill.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDatabase, startEmbeddedPostgres } from '../../deploy/local/embedded-postgres.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { startRestateServer } from '../../deploy/local/restate-server.ts';
import { migrate } from '../../services/db/migrate.ts';
import { createSql } from '../../services/shared/db.ts';
import { ROOT } from '../helpers/scripts.ts';

export interface DrillStack {
  /** The API's public address (PORT). */
  apiUrl: string;
  databaseUrl: string;
  dataDir: string;
  /** The processes the drill may kill, by kind. */
  restateNodes: string[];
  apis: string[];
  workflows: string[];
  /** One process's own address, bypassing whatever spreads requests over the replicas. */
  urlOf(name: string): string;
  /** SIGKILL, and wait until the process is gone. */
  kill(name: string): Promise<void>;
  /** Starts a killed process again and waits until it is ready, as a supervisor would. */
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** What the drill's receivers need the service to be told: where mail and hand-overs go, loopback webhooks allowed. */
export type StackEnv = Record<string, string>;

const NODE = join(ROOT, 'node_modules/.bin/node');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Child {
  start(): Promise<void>;
  process?: ChildProcess;
}

export async function startDrillStack(dataDir: string, env: StackEnv): Promise<DrillStack> {
  const logs = join(dataDir, 'logs');
  mkdirSync(logs, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    while (stops.length) await stops.pop()!().catch(() => {});
  };
  try {
    const pg = await startEmbeddedPostgres(join(dataDir, 'postgres'), await freePort());
    stops.push(() => pg.stop());
    await ensureDatabase(pg.adminUrl, 'faktura');
    const databaseUrl = pg.urlFor('faktura');
    const sql = createSql(databaseUrl, { max: 1 });
    await migrate(sql).finally(() => sql.end({ timeout: 5 }));

    const restate = await startRestateServer({
      baseDir: join(dataDir, 'restate'),
      ports: { ingress: await freePort(), admin: await freePort(), fabric: await freePort() },
      logFile: join(logs, 'restate.log'),
    });
    stops.push(() => restate.stop());

    const apiPort = await freePort();
    const base = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      RESTATE_INGRESS_URL: restate.ingressUrl,
      RESTATE_ADMIN_URL: restate.adminUrl,
      LOG_LEVEL: 'info',
      ...env,
    };
    const children = new Map<string, Child>();
    const child = (name: string, script: string, childEnv: Record<string, string>, ready: (output: string) => Promise<boolean>): Child => {
      const log = createWriteStream(join(logs, `${name}.log`), { flags: 'a' });
      const c: Child = {
        async start() {
          // A process group of its own, killed whole as a supervisor kills a service's cgroup (Chromium included).
          const p = spawn(NODE, [script], { cwd: ROOT, env: { ...base, ...childEnv }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
          c.process = p;
          let output = '';
          const keep = (d: Buffer) => {
            output += d.toString();
            log.write(d);
          };
          p.stdout.on('data', keep);
          p.stderr.on('data', keep);
          const deadline = Date.now() + 60_000;
          while (!(await ready(output))) {
            if (p.exitCode !== null || p.signalCode !== null) throw new Error(`${name} exited while starting:\n${output.slice(-2000)}`);
            if (Date.now() > deadline) throw new Error(`${name} was not ready after 60 s:\n${output.slice(-2000)}`);
            await sleep(50);
          }
        },
      };
      children.set(name, c);
      stops.push(async () => {
        const p = c.process;
        if (!p || p.exitCode !== null || p.signalCode !== null) return;
        const gone = new Promise((r) => p.once('exit', r));
        p.kill('SIGTERM');
        const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
        await gone;
        clearTimeout(timer);
        log.end();
      });
      return c;
    };
    const workflowsPort = await freePort();
    await child('workflows-1', 'workflows/main.ts', { WORKFLOWS_PORT: String(workflowsPort), WORKFLOWS_HOST: '127.0.0.1' }, async (out) =>
      out.includes('workflows endpoint listening'),
    ).start();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    await child('api-1', 'services/api/main.ts', { PORT: String(apiPort), HOST: '127.0.0.1' }, async () => {
      try {
        return (await fetch(`${apiUrl}/readyz`, { signal: AbortSignal.timeout(1000) })).ok;
      } catch {
        return false;
      }
    }).start();

    const named = (name: string): Child => {
      const c = children.get(name);
      if (!c) throw new Error(`no process named ${name}`);
      return c;
    };
    return {
      apiUrl,
      databaseUrl,
      dataDir,
      restateNodes: [],
      apis: ['api-1'],
      workflows: ['workflows-1'],
      urlOf: (name) => {
        if (name !== 'api-1') throw new Error(`${name} has no address of its own`);
        return apiUrl;
      },
      async kill(name) {
        const p = named(name).process!;
        if (p.exitCode !== null || p.signalCode !== null) return;
        const gone = new Promise((r) => p.once('exit', r));
        process.kill(-p.pid!, 'SIGKILL');
        await gone;
      },
      restart: (name) => named(name).start(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
