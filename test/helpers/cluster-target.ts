/**
 * The test target of `npm run test:cluster` (test/cluster/run.ts): with `TEST_TARGET=cluster` and
 * `TEST_CLUSTER_DATA_DIR` naming the DATA_DIR of a running `npm run start:cluster`, the helpers hand the tests a
 * stand-in for the app in place of one built in the test process. Its `inject` sends real HTTP through the cluster's
 * proxy (so a request lands on either replica), `listen` is the proxy's port, `logs()` is what the replicas wrote
 * to their log files meanwhile, and the test's organisations, keys and rows are written to the cluster's database
 * (TEST_DATABASE_URL is that database). What a running cluster cannot do for one test (its own routes, a fake
 * resolver, a mail dispatch that records) is refused by name when the test asks for it.
 */
import { request, Agent } from 'node:http';
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { RuntimeInfo } from '../../deploy/local/runtime-file.ts';

export interface ClusterTarget {
  dataDir: string;
  runtime: RuntimeInfo;
  /** The API behind its proxy, e.g. http://127.0.0.1:3000. */
  apiUrl: string;
  /** The pay page's public base (its proxy). */
  payUrl: string;
  /** The environment start:cluster was started with that the tests may rely on (WEBHOOK_ALLOW_LOOPBACK, LOG_LEVEL…). */
  env: Record<string, string>;
}

let target: ClusterTarget | undefined | null = null;

/** The running cluster the tests target, or undefined when they run against apps built in the test process. */
export function clusterTarget(): ClusterTarget | undefined {
  if (target !== null) return target;
  if (process.env.TEST_TARGET !== 'cluster') return (target = undefined);
  const dataDir = process.env.TEST_CLUSTER_DATA_DIR;
  if (!dataDir) throw new Error('TEST_TARGET=cluster needs TEST_CLUSTER_DATA_DIR (the DATA_DIR of a running npm run start:cluster)');
  const runtime = JSON.parse(readFileSync(`${dataDir}/runtime.json`, 'utf8')) as RuntimeInfo;
  if (runtime.status !== 'running' || !runtime.cluster) throw new Error(`no running start:cluster on ${dataDir}`);
  const env = JSON.parse(process.env.TEST_CLUSTER_ENV ?? '{}') as Record<string, string>;
  return (target = { dataDir, runtime, apiUrl: runtime.apiUrl, payUrl: runtime.payUrl, env });
}

const IN_PROCESS_ONLY = Symbol('in-process only');

/**
 * Marks overrides that only some tests of a file rely on (a hook that records, routes of the test's own, a resolver of
 * its own): against a running cluster they are dropped rather than refused, and the tests of the file tagged
 * @cluster are those that do not rely on them. In-process they apply as usual.
 */
export function inProcessOnly<T extends object>(overrides: T): T {
  Object.defineProperty(overrides, IN_PROCESS_ONLY, { value: true, enumerable: false });
  return overrides;
}

export const isInProcessOnly = (overrides: object): boolean => (overrides as { [IN_PROCESS_ONLY]?: boolean })[IN_PROCESS_ONLY] === true;

/** Thrown when a test asks of the cluster what only an app of its own could do: such a test is not in the sample. */
export class NotOnCluster extends Error {
  constructor(what: string) {
    super(`not possible against a running cluster: ${what}. Tag only tests that need no in-process override @cluster (docs/testing.md).`);
  }
}

const agent = new Agent({ keepAlive: true, maxSockets: 32 });

/** One request through the proxy at `baseUrl`, answered as Fastify's inject answers. */
async function send(baseUrl: string, opts: InjectOptions | string): Promise<LightMyRequestResponse> {
  const o: InjectOptions = typeof opts === 'string' ? { url: opts } : opts;
  const url = new URL(typeof o.url === 'string' ? o.url : String(o.path ?? '/'), baseUrl);
  if (o.query) {
    const q = typeof o.query === 'string' ? new URLSearchParams(o.query) : new URLSearchParams(o.query as Record<string, string>);
    for (const [k, v] of q) url.searchParams.append(k, v);
  }
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.map(String) : String(v);
  if (o.cookies) {
    const jar = Object.entries(o.cookies).map(([k, v]) => `${k}=${v}`).join('; ');
    headers.cookie = headers.cookie ? `${String(headers.cookie)}; ${jar}` : jar;
  }
  let body: Buffer | undefined;
  const payload = o.payload ?? o.body;
  if (payload !== undefined && payload !== null) {
    if (Buffer.isBuffer(payload)) body = payload;
    else if (typeof payload === 'string') body = Buffer.from(payload);
    else {
      body = Buffer.from(JSON.stringify(payload));
      headers['content-type'] ??= 'application/json';
    }
  }
  if (body) headers['content-length'] = String(body.length);
  const method = (o.method ?? 'GET').toUpperCase();
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        const out = {
          statusCode: res.statusCode ?? 0,
          statusMessage: res.statusMessage ?? '',
          headers: res.headers,
          rawPayload: raw,
          payload: text,
          body: text,
          trailers: {},
          cookies: [],
          json: () => JSON.parse(text) as unknown,
          stream: () => {
            throw new Error('stream() is not available against the cluster');
          },
          raw: { res, req },
        };
        resolve(out as unknown as LightMyRequestResponse);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A stand-in for a Fastify app served by the cluster at `baseUrl`: `inject` is a real request through the proxy,
 * `listen` leaves the app where it runs, `server.address()` is the proxy's. Anything else is refused by name.
 */
export function remoteApp(baseUrl: string, name: string): FastifyInstance {
  const port = Number(new URL(baseUrl).port);
  const known: Record<string | symbol, unknown> = {
    inject: (opts: InjectOptions | string) => send(baseUrl, opts),
    listen: async () => baseUrl,
    close: async () => {},
    ready: async () => {},
    server: { address: () => ({ address: '127.0.0.1', family: 'IPv4', port }), listening: true },
    then: undefined,
  };
  return new Proxy(known, {
    get(obj, prop) {
      if (prop in obj) return obj[prop];
      throw new NotOnCluster(`${name}.app.${String(prop)}`);
    },
  }) as unknown as FastifyInstance;
}

/**
 * What the replicas of a kind (`api`, `pay`) append to their log files from now on, as one string: the stand-in for
 * an in-process app's captured log.
 */
export function replicaLogs(kind: 'api' | 'pay' | 'workflows'): () => string {
  const t = clusterTarget()!;
  const files = (t.runtime.cluster?.processes ?? []).filter((p) => p.kind === kind).map((p) => p.logFile);
  const from = new Map(files.map((f) => [f, size(f)]));
  return () => {
    // A replica writes a request's log line as the response goes out, so the line may follow the answer by a few
    // milliseconds: wait until the files have been still for a moment (at most a second).
    let last = -1;
    for (let waited = 0; waited < 1000; waited += 50) {
      const total = files.reduce((sum, f) => sum + size(f), 0);
      if (total === last) break;
      last = total;
      Atomics.wait(pause, 0, 0, 50);
    }
    return files.map((f) => readFrom(f, from.get(f) ?? 0)).join('');
  };
}

const pause = new Int32Array(new SharedArrayBuffer(4));

function size(file: string): number {
  try {
    const fd = openSync(file, 'r');
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return 0;
  }
}

function readFrom(file: string, from: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(Math.max(0, fstatSync(fd).size - from));
    readSync(fd, buf, 0, buf.length, from);
    return buf.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
