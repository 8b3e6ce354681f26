import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WORK } from '../../contracts/workflows.ts';
import { testDb } from '../helpers/context.ts';

/**
 * One writer of wake-index rows (docs/architecture.md, "Time-driven work"): TypeScript writes them only through
 * services/clock/ (`scheduleWake`, `clearWake`, `wakeRows`, the claims), and every SQL function or trigger that lists
 * a row names a (service, handler) pair that contracts/workflows.ts knows as a wake-index target (`WORK`), so a
 * renamed handler cannot leave a trigger poking a name nobody serves.
 */
const root = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

const TARGETS = new Set(
  Object.values(WORK).map((make) => {
    const t = (make as (a: string, b: string) => { service: string; handler: string })('a', 'b');
    return `${t.service}.${t.handler}`;
  }),
);

describe('wake index: one writer', () => {
  it('no TypeScript outside services/clock/ writes wake_index rows itself', () => {
    const writes = /\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+wake_index\b/i;
    const offenders = ['services', 'activities', 'workflows', 'deploy']
      .flatMap(sourceFiles)
      .filter((f) => !f.startsWith('services/clock/'))
      .filter((f) => writes.test(readFileSync(join(root, f), 'utf8')));
    assert.deepEqual(offenders, []);
  });

  it('every SQL function that lists a row names a wake-index target of contracts/workflows.ts', async () => {
    const fns = await testDb().db.sql<{ name: string; src: string }[]>`
      SELECT p.proname AS name, p.prosrc AS src FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.prosrc ~ '(wake_schedule|wake_schedule_earliest|wake_clear)\\(''|INTO wake_index'`;
    const named: string[] = [];
    for (const { name, src } of fns) {
      for (const m of src.matchAll(/wake_schedule(?:_earliest)?\(\s*'(\w+)'\s*,\s*'(\w+)'/g)) named.push(`${name}: ${m[1]}.${m[2]}`);
      for (const m of src.matchAll(/INSERT INTO wake_index \(service, handler, key, organization_id, due_at\)\s*(?:VALUES\s*\(|SELECT\s+)'(\w+)'\s*,\s*'(\w+)'/g)) {
        named.push(`${name}: ${m[1]}.${m[2]}`);
      }
      for (const m of src.matchAll(/wake_clear\(\s*'(\w+)'/g)) {
        const service = m[1]!;
        assert.ok([...TARGETS].some((t) => t.startsWith(`${service}.`)), `${name} clears ${service}, which is no wake-index target`);
      }
    }
    // The triggers of the hand-offs, dunning and past-due looks are all found, and each names a known target.
    assert.ok(named.length >= 5, named.join('\n'));
    assert.deepEqual(named.filter((n) => !TARGETS.has(n.split(': ')[1]!)), []);
  });
});
