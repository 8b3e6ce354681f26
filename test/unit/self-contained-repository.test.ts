import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The contract documents the service was first written against. They are not in the repository, so a reader cannot
 * follow a reference to one: every rule they held that the code relies on is in docs/ (or the OpenAPI document), or
 * stated where it is used. Written here as pattern text (`[-]`), so that this file, which lists them, names none of
 * them either: a search of the repository for any of them finds nothing.
 */
const OUTSIDE_DOCUMENTS = [
  'decisions',
  'reminders[-]and[-]collection',
  'settings[-]and[-]batch',
  'api[-]spec',
  'danish[-]rules',
  'subscriptions',
  'production',
  'interest[-]and[-]plans',
  'einvoicing[-]and[-]bank',
  'design',
  'restate',
];
/** Names specific enough to be refused without their `.md` too (the danish rules' name followed by item numbers). */
const DISTINCT_NAMES = OUTSIDE_DOCUMENTS.filter((name) => name.includes('[-]'));

/** What points outside the repository, with why. */
const REFUSED: { what: string; pattern: RegExp }[] = [
  // A page of the repository's own (docs/….md) may share a name: a name only counts without a folder before it.
  { what: 'a contract document', pattern: new RegExp(String.raw`(?<![\w/-])(?:\.\./shared/)?(?:${OUTSIDE_DOCUMENTS.join('|')})\.md\b`, 'gi') },
  { what: 'a contract document', pattern: new RegExp(String.raw`(?<![\w/.-])(?:${DISTINCT_NAMES.join('|')})(?![\w-])(?!\.md\b)`, 'gi') },
  // The contracts' folder beside the repository; the same two dots and folder name followed by a module path are an
  // import of services/shared, and fine.
  { what: 'the contracts folder', pattern: /\.\.\/shared(?!\/[\w./-]*\.(?:ts|js|json)\b)/g },
  // A section number after "spec" (with "section", "rule" or "item" between them, or a possessive), a rule number
  // (two numbers with a dot), and the design document's section numbers.
  { what: 'a section of the contract', pattern: /\bspec(?:ification)?s?(?:'s)?\s+(?:(?:section|rule|item)s?\s+)?§?\s*\d/gi },
  { what: 'a rule number of the contract', pattern: /\brule\s+\d+\.\d+/gi },
  { what: 'a section of the design contract', pattern: /\bdesign\s+§?\s*\d/gi },
];

/** How a reference was written, from its parts, so that this file holds none of the references it refuses. */
const written = (...parts: string[]): string => parts.join('').replaceAll('[-]', '-');

interface Finding {
  file: string;
  line: number;
  what: string;
  text: string;
}

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((f) => f !== '');
}

function findingsIn(files: string[]): Finding[] {
  const found: Finding[] = [];
  for (const file of files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(ROOT, file));
    } catch {
      continue; // listed by git but deleted in the working tree
    }
    if (bytes.includes(0)) continue; // binary (images, fonts)
    const lines = bytes.toString('utf8').split('\n');
    lines.forEach((text, i) => {
      for (const { what, pattern } of REFUSED) {
        for (const m of text.matchAll(pattern)) found.push({ file, line: i + 1, what, text: m[0] });
      }
    });
  }
  return found;
}

const report = (found: Finding[]): string =>
  `${found.length} reference(s) to documents outside the repository; point them at docs/… instead:\n` +
  found.map((f) => `  ${f.file}:${f.line}: ${f.what} ("${f.text}")`).join('\n');

/** The repository is its own reference: no tracked file points a reader at a document it does not hold. */
describe('the repository is self-contained', () => {
  const files = trackedFiles();
  const isMarkdown = (f: string) => f.endsWith('.md');

  it('knows what it refuses (each pattern catches its example, and leaves the repository\'s own pages alone)', () => {
    const hits = (text: string) => REFUSED.filter(({ pattern }) => [...text.matchAll(pattern)].length > 0).length;
    const bad = [
      written('see ', 'decisions', '.md'),
      written('(..', '/shared/', 'danish[-]rules', '.md 7)'),
      written('danish[-]rules', ' items 1–6'),
      written('spec', ' 2.10'),
      written('Spec', ' 6 rule 5'),
      written('spec', ' section 8'),
      written('rule', ' 1.10'),
      written('design', ' 5'),
      written('..', '/shared/'),
    ];
    for (const text of bad) assert.ok(hits(text) > 0, text);
    for (const text of ['docs/reminders.md', written('docs/', 'subscriptions', '.md'), "import { x } from '../shared/config.ts'", 'Renteloven § 9 b', 'test/bench/README.md']) {
      assert.equal(hits(text), 0, text);
    }
  });

  it('no code, SQL, template, style or data file names a contract document or a section of one', () => {
    const found = findingsIn(files.filter((f) => !isMarkdown(f)));
    assert.ok(found.length === 0, report(found));
  });

  it('no Markdown file names a contract document or a section of one', () => {
    const found = findingsIn(files.filter(isMarkdown));
    assert.ok(found.length === 0, report(found));
  });
});
