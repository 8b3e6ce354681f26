import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  INVOICE_STATUSES,
  INVOICE_TRANSITIONS,
  isIssued,
  isOpen,
  OPEN_STATUSES,
  statusListSql,
  UNISSUED_STATUSES,
  type InvoiceStatus,
} from '../../services/invoices/invoice-lifecycle.ts';

const root = join(import.meta.dirname, '..', '..');
const migrationsDir = join(root, 'services', 'db', 'migrations');
const migrations = readdirSync(migrationsDir)
  .filter((f) => f.endsWith('.sql'))
  .sort()
  .map((f) => ({ file: f, text: readFileSync(join(migrationsDir, f), 'utf8') }));

/** Every `status IN (…)` / `status NOT IN (…)` list in `text` whose values include 'issued': the invoice status lists. */
function invoiceStatusLists(text: string): string[][] {
  return [...text.matchAll(/status\s+(?:NOT\s+)?IN\s*\(([^)]*)\)/gi)]
    .map((m) => [...m[1]!.matchAll(/'([^']*)'/g)].map((v) => v[1]!))
    .filter((values) => values.includes('issued'));
}

describe('invoice lifecycle', () => {
  it('splits the statuses into not issued, open and paid', () => {
    assert.deepEqual([...UNISSUED_STATUSES, ...OPEN_STATUSES, 'paid'].sort(), [...INVOICE_STATUSES].sort());
    const table: [InvoiceStatus, issued: boolean, open: boolean][] = [
      ['draft', false, false],
      ['issuing', false, false],
      ['issued', true, true],
      ['overdue', true, true],
      ['collections', true, true],
      ['paid', true, false],
    ];
    for (const [status, issued, open] of table) {
      assert.deepEqual([isIssued(status), isOpen(status)], [issued, open], status);
    }
  });

  it('has the transitions of docs/api-conventions.md, each into another status', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(INVOICE_TRANSITIONS).map(([name, t]) => [name, `${t.from.join('|')} → ${t.to}`])),
      {
        reserveIssue: 'draft → issuing',
        finishIssue: 'issuing → issued',
        remind: 'issued → overdue',
        handOver: 'issued|overdue → collections',
        settle: 'issued|overdue|collections → paid',
      },
    );
    for (const [name, t] of Object.entries(INVOICE_TRANSITIONS)) {
      assert.ok(!(t.from as readonly InvoiceStatus[]).includes(t.to), `${name} moves the status`);
    }
    // Nothing leaves paid, and nothing goes back to draft.
    const froms = Object.values(INVOICE_TRANSITIONS).flatMap((t) => t.from as readonly InvoiceStatus[]);
    assert.ok(!froms.includes('paid'));
    assert.ok(!Object.values(INVOICE_TRANSITIONS).some((t) => (t.to as InvoiceStatus) === 'draft'));
  });

  it('renders status lists as SQL literals from the constants only', () => {
    assert.equal(statusListSql(OPEN_STATUSES), "('issued', 'overdue', 'collections')");
    assert.throws(() => statusListSql(["issued'); DROP TABLE invoices; --" as InvoiceStatus]), /not an invoice status/);
  });

  it("agrees with the migrations: the status CHECK, the open invoices' partial indexes and the fee trigger", () => {
    const all = migrations.map((m) => m.text).join('\n');
    // The CHECK on invoices.status (002_invoices.sql) lists every status.
    const check = /status\s+text\s+NOT\s+NULL\s+CHECK\s*\(status\s+IN\s*\(([^)]*)\)\)/.exec(migrations.find((m) => m.file.startsWith('002_'))!.text);
    assert.deepEqual([...check![1]!.matchAll(/'([^']*)'/g)].map((v) => v[1]), [...INVOICE_STATUSES]);
    // The partial indexes the open-invoice queries rely on have exactly the predicate those queries write.
    const open = statusListSql(OPEN_STATUSES);
    for (const index of ['invoices_customer_open', 'invoices_open_by_due_date']) {
      const created = new RegExp(`CREATE INDEX ${index} ON invoices[^;]*WHERE type = 'invoice' AND status IN ([^;]*);`).exec(all);
      assert.equal(created?.[1], open, index);
      assert.ok(!new RegExp(`DROP INDEX[^;]*\\b${index}\\b`).test(all), `${index} is still there`);
    }
    // The fee trigger takes fees on open invoices only.
    assert.match(all, new RegExp(`invoice_status NOT IN ${open.replace(/[()]/g, '\\$&')} THEN`));
    // And any other list of invoice statuses in SQL is one of the two.
    for (const { file, text } of migrations) {
      for (const values of invoiceStatusLists(text)) {
        assert.ok(
          [INVOICE_STATUSES, OPEN_STATUSES].some((known) => known.join() === values.join()),
          `${file}: (${values.join(', ')}) is neither every invoice status nor the open ones`,
        );
      }
    }
  });

  it('is the only place in services/ that spells out the open statuses', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts') && entry.name !== 'invoice-lifecycle.ts' && /'issued',\s*'overdue',\s*'collections'/.test(readFileSync(path, 'utf8'))) {
          offenders.push(relative(root, path));
        }
      }
    };
    walk(join(root, 'services'));
    assert.deepEqual(offenders, []);
  });
});
