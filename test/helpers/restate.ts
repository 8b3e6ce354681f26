import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../deploy/local/ports.ts';
import { restateQuery, startRestateServer, type RestateServer } from '../../deploy/local/restate-server.ts';

export interface TestRestate extends RestateServer {
  query<T = Record<string, unknown>>(sql: string): Promise<T[]>;
}

async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

/**
 * A restate-server of its own in a temp directory, removed on stop. A failing handler is retried three times and
 * then killed, so that a broken test fails fast instead of waiting out Restate's default retry policy.
 */
export async function startTestRestate(env: Record<string, string> = {}): Promise<TestRestate> {
  const dir = mkdtempSync(join(tmpdir(), 'faktura-test-restate-'));
  const [ingress, admin, fabric] = (await distinctPorts(3)) as [number, number, number];
  let server: RestateServer;
  try {
    server = await startRestateServer({
      baseDir: join(dir, 'data'),
      ports: { ingress, admin, fabric },
      logFile: join(dir, 'restate.log'),
      env: {
        RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: '3',
        RESTATE_DEFAULT_RETRY_POLICY__ON_MAX_ATTEMPTS: 'kill',
        ...env,
      },
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...server,
    query: (sql) => restateQuery(server.adminUrl, sql),
    async stop(timeoutMs?: number) {
      try {
        await server.stop(timeoutMs);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
