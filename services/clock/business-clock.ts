import type { Clock } from '../shared/clock.ts';
import { copenhagenToday } from '../shared/clock.ts';
import type { Sql } from '../shared/db.ts';

/**
 * The organisation's business clock (docs/architecture.md, "Time-driven work"), stored in PostgreSQL.
 *
 * A live organisation runs on real time. A sandbox organisation runs on its test clock: real time plus the offset
 * in test_clocks (0 until the first advance), so time keeps flowing between advances and a retry due in 5 s comes
 * 5 s later as usual. The only thing cached is whether an organisation is a sandbox, which never changes after
 * creation; a sandbox organisation's offset is read on every call, so an advance committed by any process is seen
 * by every process at once, with no invalidation window.
 *
 * The reads go through a pool of their own: use cases ask for "today" inside their transaction, and a clock
 * sharing the main pool could wait for a connection that only its own caller's transaction would free.
 */
export interface BusinessClock extends Clock {
  /** `test` for a sandbox organisation (its clock can be advanced), `live` otherwise. */
  mode(organizationId: string): Promise<'live' | 'test'>;
}

export const DAY_MS = 86_400_000;

export function createBusinessClock(sql: Sql, realNow: () => number = Date.now): BusinessClock {
  const sandbox = new Map<string, boolean>();

  async function read(organizationId: string): Promise<{ sandbox: boolean; offsetMs: number }> {
    if (sandbox.get(organizationId) === false) return { sandbox: false, offsetMs: 0 };
    // The rule itself (sandbox organisations run ahead by their test clock's offset) is SQL's business_now(), the
    // one definition the wake index compares with too; here it only yields the offset to add to real time.
    const [row] = await sql<{ sandbox: boolean; offset_ms: number }[]>`
      SELECT o.sandbox, (extract(epoch FROM business_now(o.id) - now()) * 1000)::float8 AS offset_ms
      FROM organizations o WHERE o.id = ${organizationId}`;
    // An unknown organisation has no clock of its own: real time.
    if (!row) return { sandbox: false, offsetMs: 0 };
    if (sandbox.size > 100_000) sandbox.clear();
    sandbox.set(organizationId, row.sandbox);
    return { sandbox: row.sandbox, offsetMs: Math.round(row.offset_ms) };
  }

  const now = async (organizationId: string): Promise<Date> => {
    const { offsetMs } = await read(organizationId);
    return new Date(realNow() + offsetMs);
  };
  return {
    now,
    today: async (organizationId) => copenhagenToday(await now(organizationId)),
    mode: async (organizationId) => ((await read(organizationId)).sandbox ? 'test' : 'live'),
  };
}
