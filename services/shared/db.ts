import postgres from 'postgres';
import { Semaphore } from './semaphore.ts';
import { inUnitOfWork } from '../observability/db-spans.ts';

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

/**
 * The database as use cases see it. `read` runs queries on the pool, `tx` runs one transaction; both wait for a
 * permit so that no more units of work are in flight than the pool has connections. Never nest them. Under a traced
 * request or step each is a span (services/observability/db-spans.ts).
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
      return await inUnitOfWork('read', (watch) => fn(watch(this.sql)));
    } finally {
      this.gate.release();
    }
  }

  /**
   * One transaction through `sql.begin`. Not through `reserve()` with a BEGIN sent alongside the first statement,
   * which would save a round trip: postgres.js 3.4.9 throws from a timer and strands the pool when a reserved
   * connection whose backend died is released (porsager/postgres#1199; test/db/connection-loss.test.ts).
   */
  async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const wait = this.gate.acquire();
    if (wait) await wait;
    try {
      return await inUnitOfWork('transaction', async (watch) => (await this.sql.begin((tx) => fn(watch(tx as unknown as Tx)))) as T);
    } finally {
      this.gate.release();
    }
  }

  /** Units of work holding a connection's permit right now, and the pool size (the metrics' pool gauges). */
  get inUse(): number {
    return this.gate.held;
  }

  get size(): number {
    return this.gate.permits;
  }

  /** Units of work waiting for a permit: the pool is exhausted while this is above 0. */
  get waiting(): number {
    return this.gate.queued;
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}
