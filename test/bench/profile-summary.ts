/**
 * Where a server child spent its CPU: `node test/bench/profile-summary.ts <file.cpuprofile> [top] [focus...]`.
 * Profiles come from `BENCH_CPU_PROF=1 npm run bench` (best with BENCH_ONLY=<one route>, so one profile is one
 * route). Prints self time by function and by file (node_modules packages folded into one line each), and for
 * each `focus` substring the inclusive time of functions whose name or file matches it, e.g. `decrypt`,
 * `randomToken`, `customer-queries`. Inclusive time is what a fix to that function could save at most.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg, ...focus] = process.argv.slice(2);
if (!file) {
  console.error('usage: node test/bench/profile-summary.ts <file.cpuprofile> [top=25] [focus substring ...]');
  process.exit(2);
}
const top = Number(topArg ?? 25) || 25;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/*
 * Self time per node, counted in samples rather than summed time deltas. The sampler ticks on wall time; when the
 * thread is descheduled (on a small machine shared with PostgreSQL and the load generator, a socket write that
 * wakes the database backend often hands it the core), the missed ticks collapse into one late sample whose long
 * delta lands on whatever native call was running, typically writeBuffer or writev. Counting samples charges each
 * tick the thread actually ran once, which approximates CPU time; the nominal interval turns counts into ms.
 */
const deltas = [...profile.timeDeltas].sort((a, b) => a - b);
const interval = deltas[Math.floor(deltas.length / 2)] ?? 1000;
const self = new Map<number, number>();
let total = 0;
for (const id of profile.samples) {
  self.set(id, (self.get(id) ?? 0) + interval);
  total += interval;
}
const wall = profile.timeDeltas.reduce((a, b) => a + b, 0);

const shortUrl = (url: string): string => {
  if (!url) return '(native)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    return `npm:${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const here = url.indexOf('/work/');
  return url.startsWith('node:') ? url : here >= 0 ? url.slice(url.indexOf('/', here + 6) + 1) : url;
};
const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'}  ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%`;

function tally(key: (n: Node) => string): [string, number][] {
  const sums = new Map<string, number>();
  for (const [id, t] of self) {
    const k = key(byId.get(id)!);
    sums.set(k, (sums.get(k) ?? 0) + t);
  }
  return [...sums].sort((a, b) => b[1] - a[1]);
}

console.log(`${file}: ${profile.samples.length} samples at ~${interval} µs (${(total / 1e6).toFixed(1)} s on CPU of ${(wall / 1e6).toFixed(1)} s wall)`);
console.log('\nself time by function');
for (const [k, t] of tally(label).slice(0, top)) console.log(`${ms(t)}  ${k}`);
console.log('\nself time by file / package');
for (const [k, t] of tally((n) => shortUrl(n.callFrame.url)).slice(0, top)) console.log(`${ms(t)}  ${k}`);

// Inclusive time: a sample counts once for a focus if any frame on its stack matches (recursion is not doubled).
if (focus.length) {
  console.log('\ninclusive time');
  for (const f of focus) {
    const matches = (n: Node) => n.callFrame.functionName.includes(f) || shortUrl(n.callFrame.url).includes(f);
    const memo = new Map<number, boolean>();
    const onStack = (id: number): boolean => {
      const known = memo.get(id);
      if (known !== undefined) return known;
      const p = parent.get(id);
      const v = matches(byId.get(id)!) || (p !== undefined && onStack(p));
      memo.set(id, v);
      return v;
    };
    let t = 0;
    for (const [id, dt] of self) if (onStack(id)) t += dt;
    console.log(`${ms(t)}  ${f}`);
  }
}
