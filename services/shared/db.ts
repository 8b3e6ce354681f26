import postgres from 'postgres';
import { Semaphore } from './semaphore.ts';

export type Sql = postgres.Sql<Record<string, never>>;
export type Tx = postgres.TransactionSql<Record<string, never>>;
/** Anything that can run a query: the pool or an open transaction. */
export type Queryable = Sql | Tx;

/** bigint money columns come back as numbers, or the read fails loudly rather than losing precision. */
export function parseSafeBigint(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`bigint ${text} exceeds the safe integer range`);
  return n;
}

export function createSql(url: string, opts: { max?: number; onnotice?: (n: unknown) => void } = {}): Sql {
  return postgres(url, {
    max: opts.max ?? 10,
    onnotice: opts.onnotice ?? (() => {}),
    prepare: true,
    connection: { application_name: 'faktura' },
    types: {
      // Calendar dates stay 'YYYY-MM-DD' strings: no time zone can shift them.
      date: { to: 1082, from: [1082], serialize: (x: string) => x, parse: (x: string) => x },
      bigint: { to: 20, from: [20], serialize: (x: number | bigint) => x.toString(), parse: parseSafeBigint },
    },
  }) as unknown as Sql;
}

export interface TxControl {
  /** Sends COMMIT now, behind the statements already sent; the transaction's outcome is known once `fn` has settled. */
  commit(): void;
}

/** The COMMIT of a transaction found a failed statement before it, and PostgreSQL rolled the transaction back. */
export class TransactionRolledBack extends Error {
  constructor() {
    super('the transaction was rolled back: a statement in it failed');
  }
}

type Reserved = postgres.ReservedSql<Record<string, never>>;

async function runTransaction<T>(conn: Reserved, fn: (tx: Tx, control: TxControl) => Promise<T>): Promise<T> {
  // Both are observed whatever happens: BEGIN fails only with the connection, and then so does every statement after it.
  const begun = conn.unsafe('begin').execute();
  begun.catch(() => {});
  let committing: Promise<postgres.RowList<postgres.Row[]>> | undefined;
  const control: TxControl = {
    commit() {
      if (committing) throw new Error('commit() was called twice');
      committing = conn.unsafe('commit').execute();
      committing.catch(() => {});
    },
  };
  let value: T;
  try {
    value = await fn(conn as unknown as Tx, control);
    await begun;
  } catch (err) {
    // A COMMIT already sent behind a failed statement rolls back by itself; otherwise the transaction is rolled back
    // here. Either way nothing of it is kept (a COMMIT that went through despite a failure `fn` reported is a
    // committed effect whose answer was lost, like a crash after the commit: a retry with the key replays it).
    if (committing) await committing.catch(() => {});
    else await conn.unsafe('rollback').catch(() => {});
    throw err;
  }
  if (!committing) control.commit();
  const done = await committing!;
  if (done.command !== 'COMMIT') throw new TransactionRolledBack();
  return value;
}

/**
 * The database as use cases see it. `read` runs queries on the pool, `tx` runs one transaction; both wait for a
 * permit so that no more units of work are in flight than the pool has connections. Never nest them.
 */
export class Db {
  readonly sql: Sql;
  private readonly gate: Semaphore;

  constructor(sql: Sql, poolMax: number) {
    this.sql = sql;
    this.gate = new Semaphore(poolMax);
  }

  async read<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    const wait = this.gate.acquire();
    if (wait) await wait;
    try {
      return await fn(this.sql);
    } finally {
      this.gate.release();
    }
  }

  /**
   * One transaction on a connection of its own. BEGIN is not waited for: it travels in one write with the first
   * statement `fn` sends, and PostgreSQL runs them in order. `fn` may send the COMMIT itself with `commit()`, right
   * after its last statements and before their results arrive, so the end of a transaction costs no round trip of its
   * own either; it must send nothing after that. A statement that fails aborts the transaction, and a COMMIT that
   * follows it rolls back instead: the transaction then fails with that statement's error (as `fn` reports it) or,
   * should `fn` have resolved anyway, with `TransactionRolledBack`.
   */
  async tx<T>(fn: (tx: Tx, control: TxControl) => Promise<T>): Promise<T> {
    const wait = this.gate.acquire();
    if (wait) await wait;
    let conn: postgres.ReservedSql<Record<string, never>> | undefined;
    try {
      conn = await this.sql.reserve();
      return await runTransaction(conn, fn);
    } finally {
      conn?.release();
      this.gate.release();
    }
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}
