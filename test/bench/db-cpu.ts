/**
 * PostgreSQL's CPU time during a run, when the server runs on this machine (embedded, or a local DATABASE_URL):
 * the backends of the pool under test plus the WAL writer, checkpointer, background writer and I/O workers,
 * read from /proc. On a small machine the database competes with the server for the same cores, so a route that
 * costs the database more is slower even if the API process does the same work; this makes that visible.
 * Where /proc does not show the server's processes (a remote server), the probe reports nothing.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';

/** Linux reports process times in USER_HZ ticks, which is 100 per second on every mainstream architecture. */
export const TICK_US = 10_000;

/** A process's CPU time so far (user + system), in USER_HZ ticks; undefined when /proc does not show it. */
export function ticks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name (which may itself contain spaces); utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

export interface DbCpuProbe {
  /** Starts a reading; the returned function ends it and gives PostgreSQL's CPU time in µs, or undefined. */
  start(): Promise<() => Promise<number | undefined>>;
  close(): Promise<void>;
}

export function dbCpuProbe(url: string): DbCpuProbe {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connection: { application_name: 'faktura-bench-probe' } });
  const pids = async () =>
    (
      await sql<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity
        WHERE (datname = current_database() AND application_name = 'faktura')
           OR backend_type IN ('walwriter', 'checkpointer', 'background writer', 'io worker')`
    ).map((r) => r.pid);
  return {
    async start() {
      const before = new Map<number, number>();
      for (const pid of await pids()) {
        const t = ticks(pid);
        if (t !== undefined) before.set(pid, t);
      }
      return async () => {
        // A pool may open connections during the run (no warm-up, or after a reconnect): a process that was not
        // there at the start did all its work during the run, so all of its time counts.
        const seen = new Set([...before.keys(), ...(await pids())]);
        let sum = 0;
        let visible = before.size > 0;
        for (const pid of seen) {
          const t1 = ticks(pid);
          if (t1 === undefined) continue;
          visible = true;
          sum += t1 - (before.get(pid) ?? 0);
        }
        return visible ? sum * TICK_US : undefined;
      };
    },
    close: () => sql.end(),
  };
}
