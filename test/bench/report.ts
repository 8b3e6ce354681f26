/** Plain-text tables for the terminal; the JSON file carries the same figures in full. */
import type { Measurement, Window } from './load.ts';

export interface Target {
  route: string;
  baseline: string;
  minRatio: number;
  ratio: number | undefined;
  roundRatios: number[];
  pass: boolean | undefined;
}

export interface Row {
  label: string;
  m: Measurement;
  target: Target | undefined;
}

function table(head: string[], body: string[][], rightAligned: boolean[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAligned[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

const fmt = (n: number, digits: number) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export function formatTable(rows: Row[]): string {
  return table(
    ['route', 'req/s', 'p50 ms', 'p99 ms', 'api µs/req', 'db µs/req', 'vs', 'ratio', 'target', 'result'],
    rows.map(({ label, m, target }) => [
      label,
      fmt(m.requestsPerSec, 0),
      fmt(m.p50Ms, 2),
      fmt(m.p99Ms, 2),
      m.serverCpuUsPerRequest === undefined ? '' : fmt(m.serverCpuUsPerRequest, 0),
      m.dbCpuUsPerRequest === undefined ? '' : fmt(m.dbCpuUsPerRequest, 0),
      target ? target.baseline.toUpperCase() : '',
      target?.ratio !== undefined ? target.ratio.toFixed(2) : target ? 'n/a' : '',
      target ? `>= ${target.minRatio.toFixed(2)}` : '',
      target?.pass === undefined ? (target ? 'no baseline' : '') : target.pass ? 'PASS' : 'FAIL',
    ]),
    [false, true, true, true, true, true, false, true, false, false],
  );
}

export interface SustainedVerdict {
  firstRps: number;
  lastRps: number;
  minRps: number;
  maxRps: number;
  lastToFirst: number;
  /** The last window's server CPU per request over the first's. */
  cpuLastToFirst: number | undefined;
  /** Last window at least 0.85 × the first. */
  stable: boolean;
  /** When not stable: 'machine' if the CPU per request stayed within 15 %, else 'server'. */
  cause: 'machine' | 'server' | undefined;
}

export function formatSustained(overall: Measurement, windows: Window[], verdict: SustainedVerdict): string {
  const body = windows.map((w) => [
    `${w.fromSec}-${Math.round(w.toSec)} s`,
    fmt(w.requestsPerSec, 0),
    fmt(w.p50Ms, 2),
    fmt(w.p99Ms, 2),
    w.serverCpuUsPerRequest === undefined ? '' : fmt(w.serverCpuUsPerRequest, 0),
    fmt(w.loadAverage1m, 1),
    String(w.non2xx),
  ]);
  const cpu = verdict.cpuLastToFirst === undefined ? '' : `, api µs/req last/first ${verdict.cpuLastToFirst.toFixed(2)}`;
  const outcome = verdict.stable
    ? 'STABLE (>= 0.85)'
    : verdict.cause === 'machine'
      ? 'DEGRADED (< 0.85), but the CPU per request did not rise: other load on the machine, not the server'
      : 'DEGRADED (< 0.85) with the CPU per request rising: the server itself slowed down';
  return [
    `sustained GET /v1/customers/{id}: ${fmt(overall.requestsPerSec, 0)} req/s overall, p50 ${fmt(overall.p50Ms, 2)} ms, ` +
      `p99 ${fmt(overall.p99Ms, 2)} ms, api ${fmt(overall.serverCpuUsPerRequest ?? 0, 0)} µs/req, db ${fmt(overall.dbCpuUsPerRequest ?? 0, 0)} µs/req`,
    table(['window', 'req/s', 'p50 ms', 'p99 ms', 'api µs/req', 'load 1m', 'non-2xx'], body, [false, true, true, true, true, true, true]),
    `last/first window ${verdict.lastToFirst.toFixed(2)} (min ${fmt(verdict.minRps, 0)}, max ${fmt(verdict.maxRps, 0)} req/s)${cpu}: ${outcome}`,
  ].join('\n');
}
