import assert from 'node:assert/strict';
import { chmodSync, createWriteStream, mkdtempSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { startEmbeddedPostgres, type EmbeddedPg } from '../../deploy/local/embedded-postgres.ts';
import { freePort } from '../../deploy/local/ports.ts';

/**
 * PostgreSQL's own log under `npm start` (DATA_DIR/logs/postgres.log, written as deploy/local/start.ts writes it)
 * shows nothing a failed statement was given: not in the ERROR line, the DETAIL, the STATEMENT or its parameters.
 */
describe('the embedded PostgreSQL log shows no values of failed statements', function () {
  this.timeout(90_000);
  let dir: string;
  let pg: EmbeddedPg | undefined;
  let logFile: WriteStream;
  const logPath = () => join(dir, 'postgres.log');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'faktura-pg-log-'));
    chmodSync(dir, 0o755);
    logFile = createWriteStream(logPath(), { flags: 'a' });
    pg = await startEmbeddedPostgres(join(dir, 'data'), await freePort(), (line) => void logFile.write(`${line}\n`));
  });
  after(async () => {
    await pg?.stop();
    await new Promise<void>((resolve) => logFile.end(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs statements that fail on their values (a bad uuid, a bad integer, a duplicate key), each carrying `marker`. */
  async function failWith(marker: string, setup: string[] = []): Promise<void> {
    const sql = postgres(pg!.adminUrl, { max: 1, onnotice: () => {} });
    try {
      for (const statement of setup) await sql.unsafe(statement);
      await assert.rejects(sql`SELECT ${marker}::uuid`, { code: '22P02' });
      await assert.rejects(sql.unsafe(`SELECT '${marker}'::int`), { code: '22P02' });
      await sql.unsafe('CREATE TEMP TABLE seen (v text PRIMARY KEY)');
      await sql`INSERT INTO seen VALUES (${marker})`;
      await assert.rejects(sql`INSERT INTO seen VALUES (${marker})`, { code: '23505' });
    } finally {
      await sql.end();
    }
  }

  /** The log file once the server has written what it has (the writes reach it through a pipe). */
  async function logText(): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return readFileSync(logPath(), 'utf8');
  }

  it('has the server’s own lines but no ERROR, DETAIL, STATEMENT or parameter carrying the value', async () => {
    const marker = `kunde.${Date.now()}@example.dk 010190-1234`;
    await failWith(marker);
    const log = await logText();
    assert.match(log, /database system is ready to accept connections/);
    assert.ok(!log.includes(marker), `postgres.log shows the marker:\n${log}`);
    for (const part of ['kunde.', '010190-1234', 'ERROR:', 'STATEMENT:', 'DETAIL:']) assert.ok(!log.includes(part), `postgres.log shows ${part}`);
  });

  it('would show it with PostgreSQL’s default settings: the file is where those lines would be', async () => {
    const marker = `kontrol.${Date.now()}@example.dk`;
    await failWith(marker, ["SET log_min_messages = 'warning'", "SET log_min_error_statement = 'error'", "SET log_error_verbosity = 'default'"]);
    const log = await logText();
    assert.ok(log.includes(marker), 'with the defaults the marker is logged');
    assert.match(log, /ERROR:\s+invalid input syntax for type uuid/);
  });
});
