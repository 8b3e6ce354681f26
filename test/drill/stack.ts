/**
 * The stack the drill breaks: `start:cluster`'s production shape (deploy/local/cluster.ts: three Restate nodes with
 * replication 2, two API, two pay and two workflows processes, HAProxy in front) on a fresh DATA_DIR, with the drill's
 * receivers configured, and the handles the drill needs: every process by kind, one process's own address, SIGKILL,
 * and a restart as a supervisor would make it.
 */
import { startCluster, type RunningCluster } from '../../deploy/local/cluster.ts';

export interface DrillStack {
  /** The API's public address (PORT, the proxy in front of the replicas). */
  apiUrl: string;
  databaseUrl: string;
  dataDir: string;
  /** The processes the drill may kill, by kind. */
  restateNodes: string[];
  apis: string[];
  workflows: string[];
  /** One process's own address, bypassing the proxy in front of the replicas. */
  urlOf(name: string): string;
  /** The Restate node whose loss hurts most: the one leading the most partitions (restate-1 if none can be told). */
  busiestRestateNode(): Promise<string>;
  /** SIGKILL, and wait until the process is gone. */
  kill(name: string): Promise<void>;
  /** Starts a killed process again and waits until it is ready, as a supervisor would. */
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Settings the stack must not take from the caller's environment: the drill starts its own database, engine and
 * ports on a fresh DATA_DIR, and its operator command must read the same development key the processes use.
 */
const NOT_INHERITED = ['DATABASE_URL', 'RESTATE_INGRESS_URL', 'RESTATE_ADMIN_URL', 'DATA_ENCRYPTION_KEY', 'PORT', 'PAY_PORT', 'PAY_BASE_URL', 'PUBLIC_API_URL', 'NODE_ENV'];

export async function startDrillStack(dataDir: string, env: Record<string, string>, onExit: (name: string, how: string) => void): Promise<DrillStack> {
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const k of NOT_INHERITED) delete inherited[k];
  const cluster: RunningCluster = await startCluster(
    { ...inherited, DATA_DIR: dataDir, PORT: '0', PAY_PORT: '0', LOG_LEVEL: 'info', ...env },
    { onExit: (p, how) => onExit(p.name, how.signal ?? `exit code ${how.code}`) },
  );
  const named = (kind: string) => cluster.processes.filter((p) => p.kind === kind).map((p) => p.name);
  return {
    apiUrl: cluster.urls.api,
    databaseUrl: cluster.urls.databaseUrl,
    dataDir,
    restateNodes: named('restate'),
    apis: named('api'),
    workflows: named('workflows'),
    urlOf: (name) => cluster.process(name).url,
    async busiestRestateNode() {
      const status = await cluster.restateStatus().catch(() => ({ partitions: [] }));
      const led = new Map<string, number>();
      for (const p of status.partitions) if (p.leader) led.set(p.leader, (led.get(p.leader) ?? 0) + 1);
      const [leader] = [...led].sort((a, b) => b[1] - a[1])[0] ?? [];
      // Node ids are N1…N3 for restate-1…restate-3 (their node names n1…n3).
      const index = leader ? /\d+/.exec(leader)?.[0] : undefined;
      return index && named('restate').includes(`restate-${index}`) ? `restate-${index}` : named('restate')[0]!;
    },
    async kill(name) {
      await cluster.kill(name, 'SIGKILL');
    },
    restart: (name) => cluster.restart(name),
    stop: () => cluster.stop(),
  };
}
