/**
 * Load generation with autocannon, in the parent process. A measurement is a warm-up run whose figures are
 * thrown away (JIT, prepared statements, pool connections) followed by the measured run on fresh connections.
 */
import type { EventEmitter } from 'node:events';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { percentile } from './percentile.ts';
import type { DbCpuProbe } from './db-cpu.ts';

export interface LoadSpec {
  url: string;
  connections: number;
  /** Requests per second across all connections; 0 or absent means as fast as the server answers. */
  overallRate?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Builds each request (random ids, unique idempotency keys); called once per request. */
  setupRequest?: (req: autocannon.Request) => autocannon.Request;
}

export interface Measurement {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  totalRequests: number;
  durationSec: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** The server process's CPU time (user + system) per completed request, in µs; PostgreSQL's is not included. */
  serverCpuUsPerRequest: number | undefined;
  /** The server's CPU time over wall time: 1.0 means it kept one core busy. */
  serverCpuCores: number | undefined;
  /** The kernel's part of that CPU time (socket reads and writes, mostly). */
  serverCpuSystemShare: number | undefined;
  /** PostgreSQL's CPU time per completed request, in µs, when its processes are visible (see db-cpu.ts). */
  dbCpuUsPerRequest: number | undefined;
  /** redis-server's CPU time per completed request, in µs, for a route whose limiter counts in Redis. */
  redisCpuUsPerRequest?: number | undefined;
}

/** Reads the server process's cumulative CPU time. */
export type CpuProbe = () => Promise<NodeJS.CpuUsage>;

/** What is sampled around each measured run. */
export interface Probes {
  server?: CpuProbe;
  db?: DbCpuProbe;
  /** The redis-server the app's limiter counts in (the same start/stop reading as the database's). */
  redis?: DbCpuProbe;
}

interface CpuSpent {
  server: NodeJS.CpuUsage | undefined;
  dbUs: number | undefined;
  redisUs?: number | undefined;
}

export interface Window {
  fromSec: number;
  toSec: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /**
   * The server's CPU µs per request in this window. Throughput can fall because something else on the machine
   * wants the cores; a client that degrades by itself (porsager/postgres#747) spends more CPU per request instead.
   */
  serverCpuUsPerRequest: number | undefined;
  /** The machine's 1-minute load average at the end of the window. */
  loadAverage1m: number;
}

function options(spec: LoadSpec, durationSec: number): autocannon.Options {
  return {
    url: spec.url,
    connections: spec.connections,
    duration: durationSec,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    method: spec.method ?? 'GET',
    headers: spec.headers ?? {},
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    ...(spec.setupRequest ? { requests: [{ setupRequest: spec.setupRequest }] } : {}),
  };
}

/** Every response of a run: when it arrived (s since the run began) and how long it took (ms, hrtime-based). */
class Recorder {
  readonly at: number[] = [];
  readonly ms: number[] = [];
  readonly bad: number[] = [];
  private readonly t0 = performance.now();

  record(status: number, ms: number): void {
    const at = (performance.now() - this.t0) / 1000;
    this.at.push(at);
    this.ms.push(ms);
    if (status < 200 || status > 299) this.bad.push(at);
  }
}

function fire(opts: autocannon.Options, recorder?: Recorder): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(opts, (err: Error | null, result: autocannon.Result) => (err ? reject(err) : resolve(result)));
    if (recorder) {
      // autocannon 9 emits (client, statusCode, bytes, responseTimeMs); @types/autocannon omits the client.
      (instance as unknown as EventEmitter).on('response', (_client: unknown, status: number, _bytes: number, ms: number) =>
        recorder.record(status, ms),
      );
    }
  });
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;


/**
 * Percentiles are computed here from every response's own time rather than taken from autocannon's histogram,
 * which records whole milliseconds: at a p50 of a few ms that rounding alone would be a double-digit error.
 */
function summarise(r: autocannon.Result, rec: Recorder, spent: CpuSpent): Measurement {
  const cpu = spent.server;
  const cpuUs = cpu ? cpu.user + cpu.system : undefined;
  const perRequest = (us: number | undefined) => (us === undefined || rec.ms.length === 0 ? undefined : round(us / rec.ms.length, 1));
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  const sorted = Float64Array.from(rec.ms).sort();
  return {
    // Completed responses over the measured wall time: the same definition the sustained windows use.
    requestsPerSec: round(rec.ms.length / r.duration, 1),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    totalRequests: rec.ms.length,
    durationSec: r.duration,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
    statusCodes,
    serverCpuUsPerRequest: perRequest(cpuUs),
    serverCpuCores: cpuUs === undefined ? undefined : round(cpuUs / 1e6 / r.duration),
    serverCpuSystemShare: cpu && cpuUs ? round(cpu.system / cpuUs) : undefined,
    dbCpuUsPerRequest: perRequest(spent.dbUs),
    ...(spent.redisUs !== undefined ? { redisCpuUsPerRequest: perRequest(spent.redisUs) } : {}),
  };
}

/** Runs `work` and returns its result with the server CPU time it took, when there is a probe. */
async function withCpu<T>(probes: Probes, work: () => Promise<T>): Promise<[T, CpuSpent]> {
  const endDb = probes.db ? await probes.db.start() : undefined;
  const endRedis = probes.redis ? await probes.redis.start() : undefined;
  const before = probes.server ? await probes.server() : undefined;
  const out = await work();
  const after = probes.server ? await probes.server() : undefined;
  const dbUs = await endDb?.();
  const redisUs = await endRedis?.();
  const server = before && after ? { user: after.user - before.user, system: after.system - before.system } : undefined;
  return [out, { server, dbUs, ...(endRedis ? { redisUs } : {}) }];
}

export async function measure(spec: LoadSpec, warmupSec: number, durationSec: number, probes: Probes = {}): Promise<Measurement> {
  if (warmupSec > 0) await fire(options(spec, warmupSec));
  let rec = new Recorder();
  const [result, spent] = await withCpu(probes, () => fire(options(spec, durationSec), (rec = new Recorder())));
  return summarise(result, rec, spent);
}

/**
 * One long run, cut into windows by the time each response arrived. A client whose throughput sinks as the
 * driver's internal queue grows (porsager/postgres#747) shows up as falling windows, which one average would hide.
 */
export async function sustained(
  spec: LoadSpec,
  warmupSec: number,
  durationSec: number,
  windowSec: number,
  probes: Probes = {},
): Promise<{ overall: Measurement; windows: Window[] }> {
  if (warmupSec > 0) await fire(options(spec, warmupSec));
  let rec = new Recorder();
  // Server CPU and load average at every window boundary, taken while the load runs.
  const marks: (NodeJS.CpuUsage | undefined)[] = [];
  const loads: number[] = [];
  const sample = async () => {
    loads.push(loadavg()[0]!);
    marks.push(probes.server ? await probes.server().catch(() => undefined) : undefined);
  };
  let timer: NodeJS.Timeout | undefined;
  const [result, spent] = await withCpu(probes, async () => {
    rec = new Recorder();
    const run = fire(options(spec, durationSec), rec);
    await sample();
    timer = setInterval(() => void sample(), windowSec * 1000);
    try {
      return await run;
    } finally {
      clearInterval(timer);
    }
  });
  await sample();
  const elapsed = result.duration;
  const count = Math.max(1, Math.ceil(durationSec / windowSec));
  const buckets: number[][] = Array.from({ length: count }, () => []);
  const bad = new Array<number>(count).fill(0);
  const slot = (at: number) => Math.min(count - 1, Math.floor(at / windowSec));
  rec.at.forEach((at, i) => buckets[slot(at)]!.push(rec.ms[i]!));
  for (const at of rec.bad) bad[slot(at)]!++;
  const windows = buckets.map((l, i): Window => {
    const fromSec = i * windowSec;
    // The last window ends when the run did (it may be a little shorter or longer than the others).
    const toSec = i === count - 1 ? Math.max(fromSec + 1e-3, elapsed) : fromSec + windowSec;
    const sorted = Float64Array.from(l).sort();
    // The last window runs to the final mark, whichever interval tick came last.
    const a = marks[i];
    const b = i === count - 1 ? marks[marks.length - 1] : marks[i + 1];
    const cpuUs = a && b ? b.user - a.user + (b.system - a.system) : undefined;
    return {
      fromSec,
      toSec: round(toSec, 1),
      requestsPerSec: round(l.length / (toSec - fromSec), 1),
      p50Ms: round(percentile(sorted, 50)),
      p99Ms: round(percentile(sorted, 99)),
      non2xx: bad[i]!,
      serverCpuUsPerRequest: cpuUs === undefined || l.length === 0 ? undefined : round(cpuUs / l.length, 1),
      loadAverage1m: round(loads[i === count - 1 ? loads.length - 1 : i + 1] ?? loads[loads.length - 1] ?? 0),
    };
  });
  return { overall: summarise(result, rec, spent), windows };
}
