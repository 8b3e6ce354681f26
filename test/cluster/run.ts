/**
 * `npm run test:cluster`: the HTTP-level tests against the production shape. Starts `npm run start:cluster` (the
 * command itself, as an operator runs it) on a fresh DATA_DIR, runs every test tagged `@cluster` in test/e2e and
 * test/http against it (TEST_TARGET=cluster: requests go through the cluster's proxy, the tests' rows into its
 * database; test/helpers/cluster-target.ts), then stops it. Exit code: mocha's, or 1 when the cluster did not start
 * or did not stop cleanly. How the sample is chosen: docs/testing.md, "Against the cluster".
 *
 *   npm run test:cluster                      # the sample
 *   npm run test:cluster -- --grep pay        # a narrower one (mocha's own options are passed on)
 *   KEEP_CLUSTER_DATA=1 npm run test:cluster  # keep DATA_DIR (logs of every process) after a green run too
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_MASTER_KEY } from '../helpers/context.ts';
import { ROOT } from '../helpers/scripts.ts';

export const CLUSTER_TAG = '@cluster';
const NODE = join(ROOT, 'node_modules/.bin/node');
const BLOCK_END = '(Ctrl-C stops everything)';

/** What the cluster runs with, and what the tests may rely on (cluster-target.ts reads it back). */
export const CLUSTER_TEST_ENV: Record<string, string> = {
  // The tests' keyring: what they encrypt, the replicas decrypt (and the test provider's secret is derived from it).
  DATA_ENCRYPTION_KEY: TEST_MASTER_KEY.toString('hex'),
  // As the in-process app of the tests: no rate limit (the rate-limit tests build an app with a clock of their own).
  RATE_LIMIT_DEFAULT: '0',
  RATE_LIMIT_DOCUMENT: '0',
  // Webhook receivers of the tests listen on loopback.
  WEBHOOK_ALLOW_LOOPBACK: 'true',
  // The tests that read logs ask for debug lines (that personal data stays out of them even there).
  LOG_LEVEL: 'debug',
};

const out = (line: string) => void process.stderr.write(`${line}\n`);

function startClusterCommand(dataDir: string): Promise<{ child: ChildProcess; exited: Promise<number | null>; output: () => string }> {
  const child = spawn(NODE, ['deploy/local/start-cluster.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATA_DIR: dataDir, PORT: '0', ...CLUSTER_TEST_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    text += d.toString();
    process.stderr.write(d);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`start:cluster printed no block within 180 s:\n${text}`)), 180_000);
    const onData = () => {
      if (!text.includes(BLOCK_END)) return;
      clearTimeout(timer);
      resolve({ child, exited, output: () => text });
    };
    child.stdout.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`start:cluster exited with ${code} before it was ready:\n${text}`));
    });
  });
}

async function main(): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'faktura-test-cluster-'));
  const t0 = performance.now();
  let cluster: Awaited<ReturnType<typeof startClusterCommand>>;
  try {
    cluster = await startClusterCommand(dataDir);
  } catch (e) {
    out(`test:cluster: ${(e as Error).message}`);
    out(`test:cluster: the logs are under ${join(dataDir, 'logs')}`);
    return 1;
  }
  out(cluster.output().trimEnd());
  out(`test:cluster: the cluster answered after ${((performance.now() - t0) / 1000).toFixed(1)} s; running the tests tagged ${CLUSTER_TAG}…`);

  const files = ['test/e2e', 'test/http'].flatMap((dir) =>
    readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.test.ts')).sort().map((f) => `${dir}/${f}`),
  );
  const extra = process.argv.slice(2);
  const mocha = spawn(
    NODE,
    [
      join(ROOT, 'node_modules/mocha/bin/mocha.js'),
      '--no-config', '--extension', 'ts', '--require', 'test/helpers/root-hooks.ts', '--timeout', '30000', '--exit',
      '--grep', CLUSTER_TAG, ...extra, ...files,
    ],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, TEST_TARGET: 'cluster', TEST_CLUSTER_DATA_DIR: dataDir, TEST_CLUSTER_ENV: JSON.stringify(CLUSTER_TEST_ENV) },
    },
  );
  const code = await new Promise<number>((r) => mocha.once('exit', (c, signal) => r(c ?? (signal ? 1 : 0))));

  const stopStarted = performance.now();
  cluster.child.kill('SIGTERM');
  const stopCode = await Promise.race([cluster.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 40_000))]);
  if (stopCode === 'timeout') cluster.child.kill('SIGKILL');
  out(`test:cluster: stopped the cluster in ${((performance.now() - stopStarted) / 1000).toFixed(1)} s (${stopCode === 0 ? 'cleanly' : `exit ${stopCode}`}); ` +
    `${((performance.now() - t0) / 1000).toFixed(0)} s in all`);
  const ok = code === 0 && stopCode === 0;
  if (ok && !process.env.KEEP_CLUSTER_DATA) rmSync(dataDir, { recursive: true, force: true });
  else out(`test:cluster: the cluster's DATA_DIR (logs of every process under logs/) is kept: ${dataDir}`);
  return ok ? 0 : code || 1;
}

if (import.meta.main) process.exit(await main());
