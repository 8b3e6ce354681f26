import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from '../shared/db.ts';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Applies the numbered SQL files in services/db/migrations that have not run yet, each in its own transaction,
 * under an advisory lock so that several processes starting at once apply each file exactly once.
 *
 * A file is known by its name (schema_migrations) and never by its content: an applied migration's SQL never
 * changes, its comments may. There is no 011: the number was skipped when 012_scheduling_backbone.sql was added, and
 * no file 011 was ever in the repository's history. Numbers are not reused: a new 011 would run after 027 on every
 * database that already has the others, out of the order its number suggests.
 */
export async function migrate(sql: Sql, log: (msg: string) => void = () => {}): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(7243110001)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    const done = new Set((await tx<{ name: string }[]>`SELECT name FROM schema_migrations`).map((r) => r.name));
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.unsafe(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'));
      await tx`INSERT INTO schema_migrations (name) VALUES (${file})`;
      applied.push(file);
      log(`applied migration ${file}`);
    }
  });
  return applied;
}
