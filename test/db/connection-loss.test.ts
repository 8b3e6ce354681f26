import assert from 'node:assert/strict';
import { createSql, Db } from '../../services/shared/db.ts';

/**
 * A backend that dies in the middle of a transaction (a restart, an operator's pg_terminate_backend) fails that
 * transaction and nothing else: the pool goes on serving reads and transactions. postgres.js 3.4.9 strands its pool,
 * or throws from a timer, when a *reserved* connection is released after its backend died (porsager/postgres#1199,
 * #1195); `Db.tx` therefore runs on `sql.begin`, and this test keeps it from drifting onto `reserve()`.
 */
describe('Db after a lost connection', () => {
  let db: Db;
  let killer: ReturnType<typeof createSql>;
  before(async () => {
    db = new Db(createSql(process.env.TEST_DATABASE_URL!, { max: 2 }), 2);
    killer = createSql(process.env.TEST_DATABASE_URL!, { max: 1 });
    await killer`CREATE TABLE IF NOT EXISTS connection_loss_probe (n int)`;
  });
  after(async () => {
    await killer`DROP TABLE IF EXISTS connection_loss_probe`;
    await db.close();
    await killer.end({ timeout: 5 });
  });

  const within = <T>(p: Promise<T>, ms = 5000): Promise<T | 'timed out'> =>
    Promise.race([p, new Promise<'timed out'>((r) => setTimeout(() => r('timed out'), ms))]);

  it('fails the transaction whose backend was terminated, and serves the next reads and transactions', async () => {
    const uncaught: unknown[] = [];
    let lateStatement: unknown;
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    try {
      await assert.rejects(
        db.tx(async (tx) => {
          const [me] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
          await killer`SELECT pg_terminate_backend(${me!.pid})`;
          await new Promise((r) => setTimeout(r, 100));
          // By now the pool may have opened the same connection again for the reads below: this statement must not
          // run there, outside the dead transaction (postgres.js 3.4.9 sent it, committed, and handed its result or
          // the new session's array-types rows to the next query; patched, see patches/).
          await tx`INSERT INTO connection_loss_probe VALUES (1)`.catch((err: unknown) => {
            lateStatement = err;
            throw err;
          });
        }),
        (err: unknown) => (err as { code?: string }).code === 'CONNECTION_CLOSED',
      );
      for (let i = 0; i < 4; i++) {
        assert.deepEqual(await within(db.read(async (sql) => [...(await sql<{ one: number }[]>`SELECT 1 AS one`)])), [{ one: 1 }]);
        assert.deepEqual(await within(db.tx(async (tx) => [...(await tx<{ two: number }[]>`SELECT 2 AS two`)])), [{ two: 2 }]);
      }
      // The use case learns nothing of the loss and refuses on its own: the transaction still fails, and nothing throws.
      await assert.rejects(
        db.tx(async (tx) => {
          const [me] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
          await killer`SELECT pg_terminate_backend(${me!.pid})`;
          await new Promise((r) => setTimeout(r, 100));
          throw new Error('refused by the use case');
        }),
      );
      assert.deepEqual(await within(db.read(async (sql) => [...(await sql<{ one: number }[]>`SELECT 1 AS one`)])), [{ one: 1 }]);
      await new Promise((r) => setTimeout(r, 150));
      assert.deepEqual(uncaught, []);
      assert.equal((lateStatement as { code?: string } | undefined)?.code, 'CONNECTION_CLOSED', 'the dead transaction\'s late statement is refused at once');
      assert.deepEqual([...(await killer`SELECT count(*)::int AS n FROM connection_loss_probe`)], [{ n: 0 }], 'a statement of the dead transaction ran');
    } finally {
      process.removeListener('uncaughtException', onUncaught);
    }
  });
});
