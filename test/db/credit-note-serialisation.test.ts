import assert from 'node:assert/strict';
import { creditInvoice } from '../../services/invoices/credit-invoice.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import type { PdfRenderer } from '../../services/documents/pdf-renderer.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { call, createTestOrg, startTestApp, testClock, testDb, type TestApp } from '../helpers/context.ts';

/**
 * Credit notes of one organisation are made one at a time by every API process together: two processes (two
 * connection pools) crediting two invoices of one organisation at the same moment both succeed, numbered one after
 * the other from the series the invoices use, and the second waits for the organisation's lock at the start of its
 * transaction while the first renders its PDF.
 */
describe('credit notes across processes', () => {
  let t: TestApp;
  const replicas: Db[] = [];
  before(async () => {
    t = await startTestApp();
    for (let i = 0; i < 2; i++) replicas.push(new Db(createSql(process.env.TEST_DATABASE_URL!, { max: 2 }), 2));
  });
  after(async () => {
    await Promise.all(replicas.map((db) => db.close()));
    await t.close();
  });

  const until = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.fail(`timed out waiting until ${what}`);
  };

  it('two replicas credit two invoices of one organisation at once: both succeed with consecutive numbers', async () => {
    const org = await createTestOrg({ name: 'Bager Hansen ApS', cvr: '12345678', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C' });
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
    const issue = async () =>
      (await call(t.app, 'POST', '/v1/invoices?issue=true', {
        key: org.apiKey,
        body: { customerId, lines: [{ description: 'Rugbrød', quantity: 1, unitPriceOere: 10_000, vatRateBps: 2500 }] },
      })).body.data as { id: string; number: number };
    const invoices = [await issue(), await issue()];
    assert.deepEqual(invoices.map((i) => i.number), [1, 2]);

    // The first credit note's render waits until the test lets it go, so the second certainly arrives meanwhile.
    let renders = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const pdf: PdfRenderer = {
      async render() {
        const n = ++renders;
        if (n === 1) await held;
        return Buffer.from(`%PDF-1.4 credit note ${n} of ${org.organizationId}`);
      },
      close: async () => {},
    };
    const deps = { keyring: testDb().keyring, pdf, documents: createPostgresDocumentStore(), clock: testClock() };
    const credit = (db: Db, invoiceId: string) => db.tx((tx) => creditInvoice(tx, deps, org.organizationId, invoiceId, 'Retur'));

    const first = credit(replicas[0]!, invoices[0]!.id);
    let second: ReturnType<typeof credit> | undefined;
    const { sql } = testDb().db;
    try {
      await until('the first credit note renders', async () => renders === 1);
      second = credit(replicas[1]!, invoices[1]!.id);
      await until('the second waits for the organisation\'s credit-note lock', async () => {
        const [row] = await sql<{ n: number }[]>`
          SELECT count(*)::int AS n
          FROM pg_locks l, (SELECT hashtextextended(${`credit-notes:${org.organizationId}`}, 0) AS k) x
          WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 1
            AND l.classid::bigint = ((x.k >> 32) & 4294967295) AND l.objid::bigint = (x.k & 4294967295)`;
        return row!.n === 1;
      });
      assert.equal(renders, 1);
    } finally {
      // Also on failure, so that no transaction is left waiting for the render.
      release();
    }
    const notes = await Promise.all([first, second]);

    assert.deepEqual(notes.map((n) => [n.type, n.status, n.number, n.creditsInvoiceId]), [
      ['creditNote', 'issued', 3, invoices[0]!.id],
      ['creditNote', 'issued', 4, invoices[1]!.id],
    ]);
    // No gap and no duplicate: the organisation's invoices and credit notes hold 1..4 once each, and 5 is next.
    const numbers = await sql<{ number: number }[]>`SELECT number FROM invoices WHERE organization_id = ${org.organizationId} ORDER BY number`;
    assert.deepEqual(numbers.map((r) => r.number), [1, 2, 3, 4]);
    const [series] = await sql<{ next_number: number }[]>`SELECT next_number FROM number_series WHERE organization_id = ${org.organizationId}`;
    assert.equal(series!.next_number, 5);
  });
});
