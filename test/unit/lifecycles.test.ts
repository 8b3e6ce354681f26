import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LIFECYCLES } from '../../services/shared/lifecycle.ts';
import { testDb } from '../helpers/context.ts';

const root = join(import.meta.dirname, '..', '..');

/** Every module under services/ whose name ends in `-lifecycle.ts`: where lifecycles are defined. */
function lifecycleModules(dir = join(root, 'services')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? lifecycleModules(join(dir, e.name)) : e.name.endsWith('-lifecycle.ts') ? [join(dir, e.name)] : [],
  );
}

/** The values of the CHECK constraints on `table` that list the values of `column` (`column = ANY (ARRAY[…])`). */
async function checkedValues(table: string, column: string): Promise<string[][]> {
  const { db } = testDb();
  const rows = await db.sql<{ def: string }[]>`
    SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
    WHERE c.conrelid = ${table}::regclass AND c.contype = 'c'`;
  // The column's own CHECK is the one that is nothing but its list; others may mention it in a wider condition.
  const own = new RegExp(`^CHECK \\(\\(${column} = ANY \\(ARRAY\\[([^\\]]*)\\]\\)\\)\\)$`);
  return rows.flatMap(({ def }) => {
    const m = own.exec(def);
    return m ? [[...m[1]!.matchAll(/'([^']*)'::text/g)].map((v) => v[1]!)] : [];
  });
}

/**
 * Columns with a listed CHECK whose name says they hold a state (status, state, delivery, verification, outcome), and
 * that are no lifecycle because their value is written once and never moves: what the row records.
 */
const RECORDED_ONCE: Record<string, string> = {
  'payments.outcome': 'what the payment did to its invoice when it was booked',
  'provider_events.effect': 'what a provider callback did when it was handled',
};

/** Every `table.column` of the migrated database with a listed CHECK on a column named like a state. */
async function stateColumns(): Promise<string[]> {
  const { db } = testDb();
  const rows = await db.sql<{ tbl: string; def: string }[]>`
    SELECT c.conrelid::regclass::text AS tbl, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
    JOIN pg_namespace n ON n.oid = c.connamespace
    WHERE c.contype = 'c' AND n.nspname = current_schema()`;
  return rows.flatMap(({ tbl, def }) => {
    const m = /^CHECK \(\((\w+) = ANY \(ARRAY\[/.exec(def);
    return m && /(^|_)(status|state|delivery|verification|outcome|effect)$/.test(m[1]!) ? [`${tbl}.${m[1]}`] : [];
  });
}

describe('lifecycles (services/shared/lifecycle.ts)', () => {
  before(async () => {
    for (const file of lifecycleModules()) await import(pathToFileURL(file).href);
  });

  it('defines one lifecycle per status column', () => {
    const columns = LIFECYCLES.map((l) => `${l.table}.${l.column}`);
    assert.equal(new Set(columns).size, columns.length, columns.join(', '));
  });

  it("holds every lifecycle's states to the CHECK on its column in the migrated database", async () => {
    for (const l of LIFECYCLES) {
      const lists = await checkedValues(l.table, l.column);
      assert.equal(lists.length, 1, `${l.table}.${l.column}: one CHECK listing its values, found ${JSON.stringify(lists)}`);
      assert.deepEqual([...lists[0]!].sort(), [...l.states].sort(), `${l.name}: ${l.table}.${l.column}`);
    }
  });

  it('gives every status column of the migrated database a lifecycle', async () => {
    const defined = new Set(LIFECYCLES.map((l) => `${l.table}.${l.column}`));
    const columns = await stateColumns();
    const missing = columns.filter((c) => !defined.has(c) && !(c in RECORDED_ONCE));
    assert.deepEqual(missing, [], `status columns without a *-lifecycle.ts module: ${missing.join(', ')}`);
    // The search finds the lifecycles' own columns too: it is not looking past them.
    assert.deepEqual([...defined].filter((c) => !columns.includes(c)), []);
  });

  it("names only columns its table has (the key, the tenant, the touched time), so its guarded UPDATE can run", async () => {
    const { db } = testDb();
    for (const l of LIFECYCLES) {
      const named = [l.column, l.columns.id, l.columns.tenant, l.columns.touch].filter((c): c is string => c !== null);
      const rows = await db.sql<{ column_name: string }[]>`
        SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${l.table}`;
      const have = new Set(rows.map((r) => r.column_name));
      for (const c of named) assert.ok(have.has(c), `${l.name}: ${l.table}.${c} does not exist`);
    }
  });

  it('every transition of every lifecycle moves to another state, from states it knows', () => {
    for (const l of LIFECYCLES) {
      for (const [name, t] of Object.entries(l.transitions)) {
        assert.ok(l.isState(t.to), `${l.name}.${name} → ${t.to}`);
        for (const f of t.from) assert.ok(l.isState(f), `${l.name}.${name} from ${f}`);
      }
    }
  });

  it('names the modules it checked', () => {
    const names = lifecycleModules().map((f) => relative(root, f));
    assert.ok(names.includes(join('services', 'invoices', 'invoice-lifecycle.ts')), names.join(', '));
  });
});
