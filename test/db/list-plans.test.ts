import assert from 'node:assert/strict';
import postgres from 'postgres';
import { createKeyring } from '../../services/shared/crypto.ts';
import type { Queryable, Sql } from '../../services/shared/db.ts';
import { migrate } from '../../services/db/migrate.ts';
import { listCustomers } from '../../services/customers/list-customers.ts';
import { listProducts } from '../../services/products/list-products.ts';
import { listPayments } from '../../services/payments/list-payments.ts';
import { listInvoices } from '../../services/invoices/list-invoices.ts';
import { listEvents } from '../../services/events/list-events.ts';
import { TEST_MASTER_KEY } from '../helpers/context.ts';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/**
 * A list reads its own organisation's rows and no one else's, whatever the statistics say. On a database of its own
 * (the planner's choice depends on the table's statistics, which the shared test database would blur): organisation
 * A's customers, products, invoices, payments and events are analysed while A is the whole table, then B writes
 * 5 000 newer of each (older events: the feed reads oldest first). With an index on id alone, the planner walks it backwards through all of B's rows to find A's
 * newest (PostgreSQL 18 does, 5 000 rows removed by the filter); keyed by (organization_id, id), the page reads A's
 * 51 rows and nothing else. Each list has a control that adds the id-only index back in a rolled-back transaction
 * and sees the walk, so the statistics are shown to mislead the planner whenever it has the choice.
 */
describe("list query plans when another organisation's rows come first in the list's order", () => {
  const A = '00000000-0000-7000-8000-00000000000a';
  const B = '00000000-0000-7000-8000-00000000000b';
  const name = `faktura_plans_${process.pid}_${Date.now().toString(36)}`;
  let admin: postgres.Sql;
  let sql: Sql;
  const seen: { query: string; params: unknown[] }[] = [];

  before(async function () {
    this.timeout(60_000);
    admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    // The queries the use cases send are recorded, so that the test explains exactly those.
    sql = postgres(url.toString(), {
      max: 1,
      onnotice: () => {},
      debug: (_conn, query, params) => seen.push({ query, params }),
    });
    await migrate(sql);
    await sql`INSERT INTO organizations (id, name) VALUES (${A}, 'A'), (${B}, 'B')`;
    // Ids in time order like UUIDv7: all of B's are newer than all of A's.
    const ids = (prefix: string) => `('${prefix}' || lpad(to_hex(g), 12, '0'))::uuid`;
    // Events are read oldest first, so the other organisation's events are the older ones (eventPrefix).
    const seed = (org: string, prefix: string, eventPrefix: string, n: number) =>
      sql.unsafe(`
        INSERT INTO events (id, organization_id, type, entity_family, entity_id, sekvensnummer, data)
        SELECT ${ids(eventPrefix)}, '${org}', 'invoice.issued', 'invoice', ${ids(prefix)}, 1, '{}' FROM generate_series(1, ${n}) g;
        INSERT INTO customers (id, organization_id, type, name)
        SELECT ${ids(prefix)}, '${org}', 'company', 'Kunde ' || g FROM generate_series(1, ${n}) g;
        INSERT INTO products (id, organization_id, sku, name, unit_price_oere, vat_rate_bps)
        SELECT ${ids(prefix)}, '${org}', 'SKU-' || g, 'Vare ' || g, 100, 2500 FROM generate_series(1, ${n}) g;
        -- An issued invoice for each customer, with one payment each.
        INSERT INTO invoices (id, organization_id, type, status, number, customer_id, issue_date, due_date, net_oere, vat_oere, gross_oere, document_sha256)
        SELECT ${ids(prefix)}, '${org}', 'invoice', 'issued', g, ${ids(prefix)}, current_date, current_date + 14, 100000, 0, 100000,
               decode(repeat('ab', 32), 'hex')
        FROM generate_series(1, ${n}) g;
        INSERT INTO payments (id, organization_id, invoice_id, customer_id, source, booking_key, amount_oere, payment_date, outcome, surplus_oere)
        SELECT ${ids(prefix)}, '${org}', ${ids(prefix)}, ${ids(prefix)}, 'manual', 'key-' || g, 100, current_date, 'partial', 0
        FROM generate_series(1, ${n}) g;`);
    await sql.unsafe(`ALTER TABLE customers SET (autovacuum_enabled = false); ALTER TABLE products SET (autovacuum_enabled = false);
                      ALTER TABLE payments SET (autovacuum_enabled = false); ALTER TABLE invoices SET (autovacuum_enabled = false);
                      ALTER TABLE events SET (autovacuum_enabled = false)`);
    await seed(A, '01900000-0000-7000-8000-', '01900000-0000-7000-8000-', 300);
    await sql.unsafe('ANALYZE customers, products, payments, invoices, events');
    await seed(B, '01990000-0000-7000-8000-', '01800000-0000-7000-8000-', 5000);
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  });

  /** Runs the use case on `q`, then explains there the statement it sent, with its parameters. */
  async function explainLast(q: Queryable, run: (q: Queryable) => Promise<{ items: unknown[] }>): Promise<{ items: number; plan: PlanNode[] }> {
    seen.length = 0;
    const { items } = await run(q);
    const last = seen.findLast((s) => /\bLIMIT\b/.test(s.query));
    assert.ok(last, 'the list sent no query');
    const [row] = await q.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${last.query}`, last.params as never[]);
    const plan = (row as unknown as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
    return { items: items.length, plan: nodes(plan) };
  }
  const removedByFilter = (plan: PlanNode[]) => plan.map((n) => n['Rows Removed by Filter'] ?? 0).filter((r) => r > 0);

  const keyring = createKeyring(TEST_MASTER_KEY);

  const lists: [string, string, (q: Queryable) => Promise<{ items: unknown[] }>][] = [
    ['GET /v1/customers', 'customers', (q) => listCustomers(q, keyring, A, { limit: 50 })],
    ['GET /v1/products', 'products', (q) => listProducts(q, keyring, A, { limit: 50 })],
    ['GET /v1/invoices', 'invoices', (q) => listInvoices(q, keyring, A, 'invoice', { limit: 50 })],
    ['GET /v1/payments', 'payments', (q) => listPayments(q, keyring, A, { limit: 50 })],
    ['GET /v1/events (oldest first)', 'events', (q) => listEvents(q, keyring, A, { limit: 50 })],
  ];
  for (const [route, table, run] of lists) {
    it(`${route} reads only the organisation's rows`, async () => {
      const { items, plan } = await explainLast(sql, run);
      assert.equal(items, 50);
      assert.deepEqual(removedByFilter(plan), []);
      assert.ok(plan.every((n) => n['Actual Rows'] <= 51), JSON.stringify(plan.map((n) => [n['Node Type'], n['Actual Rows']])));
    });

    // The control: these statistics do lead the planner astray when an index on id alone exists.
    it(`${route} would walk the other organisation's rows with an index on ${table}(id)`, async () => {
      const rolledBack = new Error('rolled back');
      await assert.rejects(
        sql.begin(async (tx) => {
          await tx.unsafe(`CREATE INDEX ON ${table} (id)`);
          const { items, plan } = await explainLast(tx, run);
          assert.equal(items, 50);
          assert.deepEqual(removedByFilter(plan), [5000]);
          throw rolledBack;
        }),
        (err) => err === rolledBack,
      );
    });
  }
});
