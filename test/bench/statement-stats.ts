/**
 * Optional diagnostic (`BENCH_PG_STATS=1`): where PostgreSQL spends its time for one measured route. The embedded
 * server then loads pg_stat_statements; the counters are reset before the route's warm-up and its top statements
 * are printed after its measurement (warm-up included: compare statements by their share and mean, not by count).
 */
import postgres from 'postgres';

interface Row {
  calls: string;
  total_ms: number;
  mean_us: number;
  rows: string;
  query: string;
}

export async function statementStats(url: string): Promise<{ print(label: string, measuredRequests: number): Promise<void> }> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
  await sql`SELECT pg_stat_statements_reset()`;
  return {
    async print(label, measuredRequests) {
      try {
        const rows = await sql<Row[]>`
          SELECT calls::text, round(total_exec_time::numeric, 1)::float8 AS total_ms,
                 round((total_exec_time / calls * 1000)::numeric, 1)::float8 AS mean_us, rows::text, query
          FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
          ORDER BY total_exec_time DESC LIMIT 12`;
        const total = rows.reduce((s, r) => s + r.total_ms, 0);
        console.error(`[bench] statements of ${label} (${measuredRequests} measured requests; counts include warm-up):`);
        for (const r of rows) {
          const text = r.query.replace(/\s+/g, ' ').slice(0, 110);
          console.error(
            `  ${r.calls.padStart(8)} calls ${String(r.mean_us).padStart(8)} µs ${((100 * r.total_ms) / total).toFixed(1).padStart(5)} %  ${text}`,
          );
        }
      } finally {
        await sql.end();
      }
    },
  };
}
