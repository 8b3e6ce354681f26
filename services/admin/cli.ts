/**
 * The operator command: `npm run admin -- <command> [flags]`.
 *
 * The rule for scripts: with --json, stdout carries exactly one line of JSON and nothing else;
 * every log line, warning and error goes to stderr. Exit codes: 0 done, 1 the command could not be carried out
 * (no database, unknown organisation or key), 2 the command line is wrong.
 */
import { migrate } from '../db/migrate.ts';
import { readConfig } from '../../services/shared/config.ts';
import { createSql, Db, type Sql } from '../../services/shared/db.ts';
import { COMMANDS, OperatorError, SELLER_DETAILS_USAGE, UsageError, type Command, type FlagKind, type Flags } from './commands.ts';
import { resolveDatabaseUrl, unusableDatabaseMessage, type DatabaseLocation } from './database-url.ts';

const PROGRAM = 'npm run admin --';
const OK = 0;
const FAILED = 1;
const USAGE = 2;

const stdout = (text: string): void => void process.stdout.write(`${text}\n`);
const stderr = (text: string): void => void process.stderr.write(`${text}\n`);

function generalUsage(): string {
  const width = Math.max(...[...COMMANDS.keys()].map((n) => n.length));
  const commands = [...COMMANDS].map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}\n  ${' '.repeat(width)}  ${c.synopsis}`);
  return [
    `Usage: ${PROGRAM} <command> [flags]`,
    '',
    'Commands:',
    ...commands,
    '',
    SELLER_DETAILS_USAGE,
    '',
    'Flags of every command:',
    '  --json   print the result as exactly one line of JSON on stdout',
    '  --help   show the usage of a command',
    '',
    'The database is DATABASE_URL if set, otherwise the one `npm start` runs (named in $DATA_DIR/runtime.json,',
    'DATA_DIR defaulting to .data). Migrations are applied first.',
    'Exit codes: 0 done, 1 could not be done (no database, unknown organization or key), 2 wrong usage.',
  ].join('\n');
}

function commandUsage(name: string, command: Command): string {
  const lines = [`Usage: ${PROGRAM} ${name} ${command.synopsis}`, '', command.summary];
  if ('street' in command.flags) lines.push('', SELLER_DETAILS_USAGE);
  return lines.join('\n');
}

/**
 * `--flag value`, `--flag=value` and bare boolean flags. Strict: an unknown flag, a flag given twice, a missing
 * value or a stray argument is an error, because a silently ignored typo would create the wrong organisation or key.
 */
function parseFlags(args: readonly string[], kinds: Record<string, FlagKind>): Flags {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const kind = Object.hasOwn(kinds, name) ? kinds[name] : undefined;
    if (!kind) throw new UsageError(`unknown flag --${name}`);
    if (flags.has(name)) throw new UsageError(`--${name} is given twice`);
    if (kind === 'boolean') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    let value: string | undefined;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (i + 1 < args.length && !args[i + 1]!.startsWith('--')) value = args[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  return flags;
}

function usageError(message: string, usage: string): number {
  stderr(`error: ${message}\n\n${usage}`);
  return USAGE;
}

function failed(message: string): number {
  stderr(`error: ${message}`);
  return FAILED;
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    stdout(generalUsage());
    return OK;
  }
  const command = COMMANDS.get(name);
  if (!command) return usageError(`unknown command "${name}"`, generalUsage());
  if (args.includes('--help') || args.includes('-h')) {
    stdout(commandUsage(name, command));
    return OK;
  }

  let flags: Flags;
  let work: ReturnType<Command['prepare']>;
  try {
    flags = parseFlags(args, { ...command.flags, json: 'boolean' });
    work = command.prepare(flags);
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message, commandUsage(name, command));
    throw err;
  }

  let location: DatabaseLocation;
  try {
    location = resolveDatabaseUrl(readConfig());
  } catch (err) {
    return failed((err as Error).message);
  }

  let sql: Sql;
  try {
    sql = createSql(location.url, { max: 1 });
  } catch (err) {
    // The URL itself cannot be read (the driver parses it before connecting): a configuration error, not a fault.
    return failed(`The database URL cannot be used: ${(err as Error).message}.`);
  }
  const db = new Db(sql, 1);
  try {
    try {
      // Idempotent, so a freshly created database works at once and an up-to-date one costs one query.
      await migrate(sql, stderr);
    } catch (err) {
      return failed(unusableDatabaseMessage(location, err));
    }
    const output = await work(db);
    stdout(flags.has('json') ? JSON.stringify(output.json) : output.text);
    return OK;
  } catch (err) {
    if (err instanceof OperatorError) return failed(err.message);
    // Anything else is unexpected (a lost connection, a fault in this program): the stack helps whoever looks into it.
    return failed((err as Error).stack ?? String(err));
  } finally {
    // An open pool would keep the process alive; closing it lets the process end as soon as output is flushed.
    await db.close();
  }
}

// The exit code is set rather than forced with process.exit(), which could cut off output still buffered in a pipe.
process.exitCode = await main(process.argv.slice(2)).catch((err: unknown) => failed((err as Error).stack ?? String(err)));
