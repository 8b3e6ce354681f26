/**
 * `npm run migrate`: applies pending migrations to the database the operator command uses (DATABASE_URL, else the
 * one `npm start` runs) and prints each file it applied. Exit 0 when the database is up to date, 1 otherwise.
 */
import { resolveDatabaseUrl, unusableDatabaseMessage, type DatabaseLocation } from '../admin/database-url.ts';
import { readConfig } from '../shared/config.ts';
import { createSql } from '../shared/db.ts';
import { migrate } from './migrate.ts';

const USAGE = 'usage: npm run migrate   (applies pending migrations to DATABASE_URL, else to the database `npm start` runs; takes no arguments)\n';

async function main(args: string[]): Promise<number> {
  // Anything given is a mistake or a question (--help): answered without touching a database.
  if (args.length > 0) {
    const help = args.length === 1 && ['--help', '-h', 'help'].includes(args[0]!);
    (help ? process.stdout : process.stderr).write(help ? USAGE : `error: unexpected argument ${JSON.stringify(args[0])}\n${USAGE}`);
    return help ? 0 : 2;
  }
  let location: DatabaseLocation;
  try {
    location = resolveDatabaseUrl(readConfig());
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  }
  const sql = createSql(location.url, { max: 1 });
  try {
    const applied = await migrate(sql, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(
      applied.length === 0
        ? 'The database is up to date; no migrations were pending.\n'
        : `Applied ${applied.length} migration${applied.length === 1 ? '' : 's'}; the database is up to date.\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${unusableDatabaseMessage(location, err)}\n`);
    return 1;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

// Set, not forced with process.exit(), so that buffered output reaches a pipe before the process ends.
process.exitCode = await main(process.argv.slice(2));
