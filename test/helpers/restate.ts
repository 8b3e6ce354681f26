import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../deploy/local/ports.ts';
import { dueWakes } from '../../services/clock/wake-index.ts';
import { createRestateWakeups } from '../../services/clock/wakeups.ts';
import type { Db } from '../../services/shared/db.ts';
import { readOrCreateRequestIdentity, type RequestIdentity } from '../../services/shared/request-identity.ts';
import { restateQuery, startRestateServer, type RestateServer } from '../../deploy/local/restate-server.ts';

export interface TestRestate extends RestateServer {
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /**
   * The public key of the private key this server signs its requests with: give it to every workflows endpoint
   * (`identityKeys`), so that tests run with request identity as production does.
   */
  identityKeys: string[];
  /**
   * SIGKILLs the server, as a crash would: no shutdown, the data directory and the ports stay. `pid` and `exited`
   * keep describing the dead process until `restart`.
   */
  kill(): Promise<void>;
  /** Starts the server again on the same data directory, ports, settings and key, after `kill` (or a crash). */
  restart(): Promise<void>;
}

async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/**
 * A restate-server of its own in a temp directory, removed on stop. A failing handler is retried three times and
 * then killed, so that a broken test fails fast instead of waiting out Restate's default retry policy. It signs its
 * requests with a key pair of its own (`identityKeys`), as `npm start`'s server does.
 */
export async function startTestRestate(env: Record<string, string> = {}): Promise<TestRestate> {
  const dir = mkdtempSync(join(tmpdir(), 'faktura-test-restate-'));
  const [ingress, admin, fabric] = (await distinctPorts(3)) as [number, number, number];
  let server: RestateServer;
  let identity: RequestIdentity;
  let start: () => Promise<RestateServer>;
  try {
    identity = readOrCreateRequestIdentity(dir);
    const options = {
      baseDir: join(dir, 'data'),
      ports: { ingress, admin, fabric },
      logFile: join(dir, 'restate.log'),
      requestIdentityPrivateKeyPemFile: identity.privateKeyPemFile,
      env: {
        RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: '3',
        RESTATE_DEFAULT_RETRY_POLICY__ON_MAX_ATTEMPTS: 'kill',
        ...env,
      },
    };
    start = () => startRestateServer(options);
    server = await start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // Getters: after a restart the pid, the exit and the start-up time are the new process's.
  return {
    ingressUrl: server.ingressUrl,
    adminUrl: server.adminUrl,
    ports: server.ports,
    get pid() {
      return server.pid;
    },
    get startupMs() {
      return server.startupMs;
    },
    get exited() {
      return server.exited;
    },
    query: (sql) => restateQuery(server.adminUrl, sql),
    identityKeys: [identity.publicKey],
    async kill() {
      try {
        process.kill(server.pid, 'SIGKILL');
      } catch (err) {
        // Gone already (it crashed on its own): nothing to kill.
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
      await server.exited;
      // Already exited: only forgets the process (its exit listener).
      await server.stop();
    },
    async restart() {
      server = await start();
    },
    async stop(timeoutMs?: number) {
      try {
        await server.stop(timeoutMs);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * What the housekeeping loop's due-work job does for an organisation whose wake-index rows are due, without waiting out the
 * minute's grace: pokes every row of the organisation that is due now through its BusinessClock object. Returns how
 * many rows were due. Only this organisation is woken: other tests leave work behind that must not be poked here.
 */
export async function wakeDueWork(db: Db, ingressUrl: string, organizationId: string): Promise<number> {
  const due = await dueWakes(db, organizationId, null, 10_000);
  await createRestateWakeups(ingressUrl).wakeDue(organizationId);
  return due.length;
}
