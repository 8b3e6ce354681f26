import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { CONCURRENT_INVOCATIONS, DEFAULT_JOURNAL_RETENTION, type RestatePorts } from './restate-server.ts';

/**
 * restate-server as a cluster on one machine, for `npm run start:cluster`: Restate's own cluster mode (one cluster
 * name, a node name, base directory and set of ports per node, the replicated metadata server on every node), made
 * into one cluster by `restatectl provision` (Restate's own tooling), once: a provisioned cluster answers "provisioned
 * by somebody else" and stays as it is.
 */

export const CLUSTER_NAME = 'faktura-local';
export const RESTATE_NODES = 3;
/** Logs and partitions: each on two of the three nodes, so one node can go away. */
export const REPLICATION = 2;
/**
 * Fixed at provisioning, like the single node's: a few partitions start fast on one machine and still spread over
 * the three nodes (each partition's leader and follower on two of them).
 */
export const CLUSTER_PARTITIONS = 4;

export interface RestateNodeSpec {
  /** restate-1 … restate-3: the process name; the node name is n1 … n3. */
  name: string;
  nodeName: string;
  baseDir: string;
  ports: RestatePorts;
}

const require = createRequire(import.meta.url);

export function restatectlBinary(): string {
  return require.resolve(`@restatedev/restatectl-${process.platform}-${process.arch}/bin/restatectl`);
}

export const fabricUrl = (ports: RestatePorts): string => `http://127.0.0.1:${ports.fabric}/`;

/**
 * One node's configuration file. Every node has every role (ingress, admin, worker, log server, metadata server): the
 * metadata is replicated over all three (2n+1 = 3 tolerates one failure), and any node's ingress or admin API serves
 * the whole cluster. `auto-provision` is off on all of them: `restatectl provision` makes them a cluster. With a
 * `tracingEndpoint` (the OTLP/gRPC relay of otlp-grpc-relay.ts) the node exports its traces there.
 */
export function restateNodeConfig(
  node: RestateNodeSpec,
  all: readonly RestateNodeSpec[],
  requestIdentityPrivateKeyPemFile?: string,
  opts: { tracingEndpoint?: string } = {},
): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    '# Written by deploy/local/cluster.ts at every start (ports may change between starts); edits are overwritten.',
    `cluster-name = ${q(CLUSTER_NAME)}`,
    `node-name = ${q(node.nodeName)}`,
    `base-dir = ${q(node.baseDir)}`,
    'auto-provision = false',
    `default-replication = ${REPLICATION}`,
    `default-num-partitions = ${CLUSTER_PARTITIONS}`,
    `bind-address = ${q(`127.0.0.1:${node.ports.fabric}`)}`,
    `advertised-address = ${q(fabricUrl(node.ports))}`,
    // Loopback TCP only (the 1.7 default binds every interface and also opens Unix sockets).
    'listen-mode = "tcp"',
    'disable-telemetry = true',
    // Completed journals are kept for a whole dunning cycle, as on the single node (restate-server.ts).
    `default-journal-retention = ${q(DEFAULT_JOURNAL_RETENTION)}`,
    // A node that (re)joins is "suspect" for this long before partitions are placed on it (default 5 s, which is most
    // of a cold start here). On loopback there is no flaky network for the longer wait to smooth over.
    'gossip-suspect-interval = "1s"',
    // Three nodes share one machine: RocksDB's 2 GiB default each would be 6 GiB of caches for a development stack.
    'rocksdb-total-memory-size = "384 MiB"',
    // The version check reaches GitHub at every start and logs an error offline (guide §7.5 #18).
    'log-filter = "warn,octocrab=off"',
    'log-disable-ansi-codes = true',
    ...(opts.tracingEndpoint ? [`tracing-endpoint = ${q(opts.tracingEndpoint)}`] : []),
    '',
    '[metadata-client]',
    `addresses = [${all.map((n) => q(fabricUrl(n.ports))).join(', ')}]`,
    '',
    '[admin]',
    `bind-address = ${q(`127.0.0.1:${node.ports.admin}`)}`,
    '',
    '[ingress]',
    `bind-address = ${q(`127.0.0.1:${node.ports.ingress}`)}`,
    '',
    '[worker.invoker]',
    // The same bound as the single node's (restate-server.ts), per node: a burst of due work queues in Restate.
    `concurrent-invocations-limit = ${CONCURRENT_INVOCATIONS}`,
    // Every node signs its requests to the workflows endpoints with the one key pair (docs/operations.md, "Request identity").
    ...(requestIdentityPrivateKeyPemFile ? [`request-identity-private-key-pem-file = ${q(requestIdentityPrivateKeyPemFile)}`] : []),
    '',
  ].join('\n');
}

const run = promisify(execFile);

async function restatectl(addresses: readonly string[], args: string[], timeoutMs = 15_000): Promise<{ stdout: string; stderr: string }> {
  return run(restatectlBinary(), ['--address', addresses.join(','), ...args], {
    timeout: timeoutMs,
    // A clean environment: RESTATECTL_ADDRESS or CI in the operator's environment must not change what it does.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', CI: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * `restatectl provision`, retried until the nodes answer. restatectl exits 0 whether or not it provisioned (a refused
 * connection included), so its words decide: "successfully provisioned" the first time, "provisioned by somebody
 * else" on every later start.
 */
export async function provisionCluster(nodes: readonly RestateNodeSpec[], timeoutMs = 60_000): Promise<'provisioned' | 'already provisioned'> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const { stdout, stderr } = await restatectl(
        nodes.map((n) => fabricUrl(n.ports)),
        ['provision', '--yes', '--replication', String(REPLICATION), '--num-partitions', String(CLUSTER_PARTITIONS)],
      );
      const said = `${stdout}\n${stderr}`;
      if (/successfully provisioned/i.test(said)) return 'provisioned';
      if (/provisioned by somebody else|already provisioned/i.test(said)) return 'already provisioned';
      last = said.trim();
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`restatectl provision did not succeed within ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `restatectl sql --json`: the cluster's own tables (nodes, partitions, logs, partition_replica_set, …). */
export async function restatectlSql<T = Record<string, unknown>>(addresses: readonly string[], query: string): Promise<T[]> {
  const { stdout } = await restatectl(addresses, ['sql', '--json', query]);
  const start = stdout.indexOf('[');
  const end = stdout.lastIndexOf(']');
  if (start < 0 || end < start) return [];
  return JSON.parse(stdout.slice(start, end + 1)) as T[];
}

export interface RestateClusterStatus {
  nodes: { id: string; name: string; state: string; address: string; metadata: string }[];
  /** Per partition: the nodes that hold it (ids) and the leader, by id and by node name (n1…n3 run as restate-1…3). */
  partitions: { id: number; replicas: string[]; leader: string | null; leaderName: string | null }[];
  /** Per log: its replication as Restate reports it, e.g. "{node: 2}". */
  logs: { id: number; replication: string; nodeset: string }[];
}

/** What `restatectl status` shows, as data: which nodes are alive, where every partition and log lives. */
export async function restateClusterStatus(addresses: readonly string[]): Promise<RestateClusterStatus> {
  const [nodes, partitions, logs] = await Promise.all([
    restatectlSql<{ plain_node_id: string; name: string; state: string; address: string; metadata_server_state?: string }>(
      addresses,
      'SELECT plain_node_id, name, state, address, metadata_server_state FROM nodes ORDER BY plain_node_id',
    ),
    restatectlSql<{ partition_id: number; current_replica_set?: string; leader_plain_node_id?: string }>(
      addresses,
      'SELECT partition_id, current_replica_set, leader_plain_node_id FROM partitions ORDER BY partition_id',
    ),
    // The last segment of each log is the one being written.
    restatectlSql<{ log_id: number; segment_index: number; replication: string; nodeset: string }>(
      addresses,
      'SELECT log_id, segment_index, replication, nodeset FROM logs ORDER BY log_id, segment_index',
    ),
  ]);
  const lastSegment = new Map<number, { log_id: number; replication: string; nodeset: string }>();
  for (const l of logs) lastSegment.set(l.log_id, l);
  // Node ids (N1…) are handed out in the order the nodes first joined, not by name: n3 may be N2.
  const nameOf = new Map(nodes.map((n) => [n.plain_node_id, n.name]));
  return {
    nodes: nodes.map((n) => ({ id: n.plain_node_id, name: n.name, state: n.state, address: n.address, metadata: n.metadata_server_state ?? '' })),
    partitions: partitions.map((p) => ({
      id: p.partition_id,
      replicas: (p.current_replica_set ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      leader: p.leader_plain_node_id ?? null,
      leaderName: (p.leader_plain_node_id && nameOf.get(p.leader_plain_node_id)) || null,
    })),
    logs: [...lastSegment.values()].map((l) => ({ id: l.log_id, replication: l.replication, nodeset: l.nodeset })),
  };
}
