import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LIFECYCLES } from '../../services/shared/lifecycle.ts';

/**
 * No status literal outside its lifecycle module: a state written, compared or listed next to its column's name
 * (`status = 'queued'`, `row.status === 'paid'`, `delivery IN ('pending', …)`, `{ state: 'approved' }`) in
 * services/, activities/ or workflows/ names it through the lifecycle module instead (its constants, `state.x`,
 * `in()` lists, transitions), so a state is renamed or added in one place. Comments are not code; a union type
 * (`status: 'sent' | 'failed'`) describes a shape and is left alone.
 */
const root = join(import.meta.dirname, '..', '..');

/** The same words in another vocabulary: the line's literal is not a state of the column it sits next to. */
const OTHER_VOCABULARY: { file: string; text: RegExp; why: string }[] = [
  {
    file: 'services/invoices/send-invoice.ts',
    text: /\bstatus: '(sent|failed)'/,
    why: "the API's meta.send (sent | failed), not invoice_sends.status",
  },
  {
    file: 'services/clock/engine-invocations.ts',
    text: /\bstatus <> 'completed'/,
    why: "restate-server's own sys_invocation.status, asked through its introspection, not a column of ours",
  },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function lifecycleModules(dir = join(root, 'services')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? lifecycleModules(join(dir, e.name)) : e.name.endsWith('-lifecycle.ts') ? [join(dir, e.name)] : [],
  );
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');

/** The patterns of one column and the states its lifecycles have. */
function patterns(column: string, states: string[]): RegExp[] {
  const state = `'(?:${states.map(escape).join('|')})'`;
  return [
    // SQL and TypeScript comparisons and assignments: status = 'x', s.status <> 'x', row.status === 'x'.
    new RegExp(`\\b${column}\\s*(?:===|!==|==|!=|<>|=)\\s*${state}`),
    new RegExp(`${state}\\s*(?:===|!==)\\s*[\\w.?!]*\\b${column}\\b`),
    // SQL lists: status IN ('x', …), status NOT IN (…).
    new RegExp(`\\b${column}\\s+(?:NOT\\s+)?IN\\s*\\([^)]*${state}`, 'i'),
    // One state as a value: { status: 'x' }, not a union type (status: 'x' | 'y').
    new RegExp(`\\b${column}\\s*:\\s*${state}(?!\\s*\\|)`),
  ];
}

/** A line without its comment: whole-line comments go, and a trailing `// …` after code. */
const code = (line: string): string => {
  const t = line.trim();
  if (t.startsWith('*') || t.startsWith('//') || t.startsWith('/*')) return '';
  return line.replace(/\s\/\/\s.*$/, '');
};

describe('no status literal outside its lifecycle module', () => {
  before(async () => {
    for (const file of lifecycleModules()) await import(pathToFileURL(file).href);
  });

  const isModule = (file: string): boolean => file.endsWith('-lifecycle.ts') || file === 'services/shared/lifecycle.ts';

  function offences(): string[] {
    const byColumn = new Map<string, Set<string>>();
    for (const l of LIFECYCLES) {
      const set = byColumn.get(l.column) ?? new Set<string>();
      for (const s of l.states) set.add(s);
      byColumn.set(l.column, set);
    }
    const checks = [...byColumn].flatMap(([column, states]) => patterns(column, [...states]));
    const files = ['services', 'activities', 'workflows'].flatMap((d) => sourceFiles(d)).filter((f) => !isModule(f));
    return files.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => {
          const text = code(line);
          if (!checks.some((re) => re.test(text))) return [];
          if (OTHER_VOCABULARY.some((o) => o.file === file && o.text.test(text))) return [];
          return [`${file}:${i + 1}: ${line.trim()}`];
        }),
    );
  }

  it('finds none in services/, activities/ and workflows/', () => {
    const found = offences();
    assert.deepEqual(found, [], `state literals outside their lifecycle module:\n${found.join('\n')}`);
  });

  it('would find one: each pattern catches its kind of literal, and leaves comments and union types alone', () => {
    const [eq, rev, list, value] = patterns('status', ['queued', 'given-up']);
    assert.ok(eq!.test("WHERE d.status = 'queued'") && eq!.test("row.status !== 'given-up'"));
    assert.ok(rev!.test("'queued' === row.status"));
    assert.ok(list!.test("AND status NOT IN ('failed', 'given-up')"));
    assert.ok(value!.test("return { status: 'queued' };"));
    assert.ok(!value!.test("status: 'queued' | 'given-up';"));
    assert.ok(!eq!.test("WHERE d.status = ${QUEUED}") && !eq!.test("paymentStatus = 'queued'"));
    assert.equal(code(" * the status = 'queued' of a comment"), '');
    assert.equal(code("x = 1; // status = 'queued'").includes('queued'), false);
  });
});
