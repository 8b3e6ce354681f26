import assert from 'node:assert/strict';
import postgres from 'postgres';
import { createSql, Db, TransactionRolledBack } from '../../services/shared/db.ts';

/**
 * `Db.tx` sends BEGIN without waiting for it and lets the use case send COMMIT right behind its last statements.
 * Neither may change what a transaction is: all of it or nothing, and never a connection left inside one.
 */
describe('Db.tx', () => {
  let db: Db;
  const table = `tx_probe_${process.pid}`;
  before(async () => {
    db = new Db(createSql(process.env.TEST_DATABASE_URL!, { max: 3 }), 3);
    await db.sql.unsafe(`CREATE TABLE ${table} (id int PRIMARY KEY, note text NOT NULL)`);
  });
  after(async () => {
    await db.sql.unsafe(`DROP TABLE ${table}`);
    await db.close();
  });
  beforeEach(() => db.sql.unsafe(`TRUNCATE ${table}`));

  const rows = async () => (await db.sql.unsafe<{ id: number }[]>(`SELECT id FROM ${table} ORDER BY id`)).map((r) => r.id);
  const openTransactions = async () =>
    (await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`)[0]!.n;
  const insert = (tx: postgres.Sql<Record<string, never>>, id: number, note: string | null) =>
    tx.unsafe(`INSERT INTO ${table} (id, note) VALUES ($1, $2)`, [id, note as string]).execute();

  it('runs the first statement inside the transaction it travels with', async () => {
    const [a, b] = await db.tx(async (tx) => {
      const [first] = await tx<{ xid: string | null; at: Date }[]>`SELECT txid_current()::text AS xid, now() AS at`;
      await new Promise((r) => setTimeout(r, 20));
      const [second] = await tx<{ xid: string | null; at: Date }[]>`SELECT txid_current()::text AS xid, now() AS at`;
      return [first!, second!];
    });
    assert.equal(a.xid, b.xid);
    assert.equal(a.at.getTime(), b.at.getTime());
  });

  it('keeps everything when the use case commits behind its last statements', async () => {
    const result = await db.tx(async (tx, control) => {
      await insert(tx as never, 1, 'awaited');
      const last = insert(tx as never, 2, 'in flight');
      control.commit();
      await last;
      return 'done';
    });
    assert.equal(result, 'done');
    assert.deepEqual(await rows(), [1, 2]);
    assert.equal(await openTransactions(), 0);
  });

  it('keeps nothing when a statement in front of an early COMMIT fails, and reports that statement', async () => {
    await assert.rejects(
      db.tx(async (tx, control) => {
        await insert(tx as never, 1, 'awaited');
        const failing = insert(tx as never, 2, null); // NOT NULL violation
        control.commit();
        await failing;
      }),
      (err: unknown) => err instanceof postgres.PostgresError && err.code === '23502',
    );
    assert.deepEqual(await rows(), []);
    assert.equal(await openTransactions(), 0);
  });

  it('keeps nothing when a statement failed unobserved and the use case resolved anyway', async () => {
    await assert.rejects(
      db.tx(async (tx) => {
        insert(tx as never, 1, null).catch(() => {}); // fails, and the use case looks away
        await insert(tx as never, 2, 'after the failure').catch(() => {});
        return 'looked fine';
      }),
      TransactionRolledBack,
    );
    assert.deepEqual(await rows(), []);
    assert.equal(await openTransactions(), 0);
  });

  it('rolls back what the use case wrote when it throws', async () => {
    await assert.rejects(
      db.tx(async (tx) => {
        await insert(tx as never, 1, 'written');
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.deepEqual(await rows(), []);
    assert.equal(await openTransactions(), 0);
  });

  it('refuses a second commit()', async () => {
    await assert.rejects(
      db.tx(async (_tx, control) => {
        control.commit();
        control.commit();
      }),
      /commit\(\) was called twice/,
    );
    assert.equal(await openTransactions(), 0);
  });
});
