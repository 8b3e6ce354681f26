import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import { call, createTestOrg, newIdempotencyKey, startTestApp, TEST_MASTER_KEY, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { camt053 } from '../helpers/camt053.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { fikPaymentId } from '../../services/payments/fik-payment-id.ts';

/**
 * A process killed in the middle of a bank statement import leaves nothing of it: the entries, the payments and the
 * stored answer are one transaction. The retry with the same Idempotency-Key imports the document once, every
 * payment booked once, and a further retry replays it.
 */
describe('a bank statement import survives a killed process', () => {
  let t: TestApp;
  const dir = mkdtempSync(join(tmpdir(), 'camt053-'));
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function setUp(n: number): Promise<{ org: TestOrg; xml: string; invoiceIds: string[] }> {
    const org = await createTestOrg({ fiCreditorNumber: '85799665' });
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
    const invoices: { id: string; fik: { paymentId: string } }[] = [];
    for (let i = 0; i < n; i++) {
      const res = await call(t.app, 'POST', '/v1/invoices?issue=true', {
        key: org.apiKey, body: { customerId, lines: [{ description: 'Ydelse', quantity: 1, unitPriceOere: 10_000 * (i + 1), vatRateBps: 0, vatExemptionReason: 'ML13' }] },
      });
      assert.equal(res.status, 201, res.raw);
      invoices.push(res.body.data);
    }
    const day = addDays(copenhagenToday(new Date()), -1);
    const xml = camt053(8, [{
      id: 'CRASH', entries: invoices.map((inv, i) => ({ amount: (100 * (i + 1)).toFixed(2), acctSvcrRef: `C-${i}`, bookingDate: day, txs: [{ ref: inv.fik.paymentId }] })),
    }]);
    return { org, xml, invoiceIds: invoices.map((i) => i.id) };
  }

  async function importAndKill(org: TestOrg, xml: string, key: string, stopAt: number): Promise<void> {
    const file = join(dir, `${key}.xml`);
    writeFileSync(file, xml);
    const child = spawn(
      process.execPath,
      ['test/db/fixtures/import-and-hang.ts', process.env.TEST_DATABASE_URL!, TEST_MASTER_KEY.toString('hex'), org.organizationId, key, file, String(stopAt)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('stopped') && resolve());
      child.once('exit', (code) => reject(new Error(`child exited early (${code})`)));
    });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  const counts = async (org: TestOrg) => {
    const { sql } = testDb().db;
    const [row] = await sql<{ statements: number; entries: number; payments: number; keys: number }[]>`
      SELECT (SELECT count(*)::int FROM bank_statements WHERE organization_id = ${org.organizationId}) AS statements,
             (SELECT count(*)::int FROM bank_statement_entries WHERE organization_id = ${org.organizationId}) AS entries,
             (SELECT count(*)::int FROM payments WHERE organization_id = ${org.organizationId}) AS payments,
             (SELECT count(*)::int FROM idempotency_keys WHERE organization_id = ${org.organizationId} AND response_status = 201
                AND response_location LIKE '/v1/bank-statements/%') AS keys`;
    return row!;
  };

  for (const [when, stopAt] of [['before any payment', 1], ['after two payments were booked', 4]] as const) {
    it(`killed ${when}: nothing is kept, and the retry with the same key books every payment once`, async () => {
      const { org, xml, invoiceIds } = await setUp(4);
      const key = newIdempotencyKey();
      await importAndKill(org, xml, key, stopAt);
      assert.deepEqual(await counts(org), { statements: 0, entries: 0, payments: 0, keys: 0 }, 'nothing of the killed import is visible');
      const post = () => call(t.app, 'POST', '/v1/bank-statements', { key: org.apiKey, body: xml, headers: { 'content-type': 'application/xml' }, idempotencyKey: key });
      // Until PostgreSQL has noticed the dead connection and rolled its transaction back, the key's lock is held: the
      // retry is told 409 idempotency_in_progress (Retry-After: 1) and tries again, as a client does.
      let retried = await post();
      for (let i = 0; i < 50 && retried.status === 409 && retried.body.error.code === 'idempotency_in_progress'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        retried = await post();
      }
      assert.equal(retried.status, 201, retried.raw);
      assert.deepEqual(retried.body.data.counts, { entries: 4, matched: 4, unmatched: 0, duplicate: 0, ignored: 0 });
      assert.deepEqual(await counts(org), { statements: 1, entries: 4, payments: 4, keys: 1 });
      const { sql } = testDb().db;
      const paid = await sql<{ invoice_id: string }[]>`SELECT invoice_id FROM payments WHERE organization_id = ${org.organizationId}`;
      assert.deepEqual(paid.map((p) => p.invoice_id).sort(), [...invoiceIds].sort());
      const again = await post();
      assert.equal(again.status, 201);
      assert.equal(again.body.meta.replayed, true);
      assert.equal(again.body.data.id, retried.body.data.id);
      assert.deepEqual(await counts(org), { statements: 1, entries: 4, payments: 4, keys: 1 });
    });
  }

  it('the API process killed (SIGKILL) while it books a large import: nothing is kept, the retry books every payment once', async function () {
    this.timeout(180_000);
    const n = 2000;
    const org = await createTestOrg({ fiCreditorNumber: '85799665' });
    const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id as string;
    // Open invoices written straight into the tables (issuing 2000 through the API would render 2000 PDFs).
    const { sql } = testDb().db;
    const numbers = Array.from({ length: n }, (_, i) => i + 1);
    await testDb().db.tx(async (tx) => {
      const doc = await createPostgresDocumentStore().put(tx, { organizationId: org.organizationId, contentType: 'application/pdf', bytes: Buffer.from(`%PDF-1.4 ${org.organizationId}`) });
      await tx`
        INSERT INTO invoices (id, organization_id, type, status, number, customer_id, issue_date, due_date, payment_terms_days,
                              net_oere, vat_oere, gross_oere, document_sha256, issued_at, fik_payment_id, fik_creditor_number)
        SELECT gen_random_uuid(), ${org.organizationId}, 'invoice', 'issued', k, ${customerId}, current_date - 7, current_date + 7, 14,
               k * 100, 0, k * 100, ${doc.sha256}, now(), fik, '85799665'
        FROM unnest(${numbers}::bigint[], ${numbers.map(fikPaymentId)}::text[]) AS s (k, fik)`;
      await tx`INSERT INTO number_series (organization_id, next_number) VALUES (${org.organizationId}, ${n + 1})
               ON CONFLICT (organization_id) DO UPDATE SET next_number = ${n + 1}`;
    });
    const day = addDays(copenhagenToday(new Date()), -1);
    const xml = camt053(8, [{ id: 'API-CRASH', entries: numbers.map((k) => ({ amount: k.toFixed(2), acctSvcrRef: `K-${k}`, bookingDate: day, txs: [{ ref: fikPaymentId(k) }] })) }]);
    const key = newIdempotencyKey();

    const port = await freePort();
    const api = spawn(process.execPath, ['services/api/main.ts'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_URL: process.env.TEST_DATABASE_URL!, DATA_ENCRYPTION_KEY: TEST_MASTER_KEY.toString('hex'),
        HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((r) => api.once('exit', r));
    try {
      for (let i = 0; ; i++) {
        const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
        if (up) break;
        if (i > 300 || api.exitCode !== null) assert.fail('the API process did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
      const request = fetch(`http://127.0.0.1:${port}/v1/bank-statements`, {
        method: 'POST', body: xml, headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/xml', 'idempotency-key': key },
      }).then(() => 'answered', () => 'cut off');
      // Killed once the import has booked payments in its open transaction: some are inserted, none committed.
      for (let i = 0; ; i++) {
        const [booking] = await sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
          WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND c.relname = 'payments'
            AND l.mode = 'RowExclusiveLock' AND l.granted`;
        if (booking!.n > 0) break;
        if (i > 600) assert.fail('the import never started booking');
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 300));
      api.kill('SIGKILL');
      await exited;
      assert.equal(await request, 'cut off');
    } finally {
      if (api.exitCode === null && api.signalCode === null) api.kill('SIGKILL');
    }
    assert.deepEqual(await counts(org), { statements: 0, entries: 0, payments: 0, keys: 0 }, 'nothing of the killed import is visible');

    const post = () => call(t.app, 'POST', '/v1/bank-statements', { key: org.apiKey, body: xml, headers: { 'content-type': 'application/xml' }, idempotencyKey: key });
    let retried = await post();
    for (let i = 0; i < 100 && retried.status === 409 && retried.body.error.code === 'idempotency_in_progress'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      retried = await post();
    }
    assert.equal(retried.status, 201, retried.raw);
    assert.deepEqual(retried.body.data.counts, { entries: n, matched: n, unmatched: 0, duplicate: 0, ignored: 0 });
    assert.deepEqual(await counts(org), { statements: 1, entries: n, payments: n, keys: 1 });
    const [distinct] = await sql<{ n: number }[]>`SELECT count(DISTINCT invoice_id)::int AS n FROM payments WHERE organization_id = ${org.organizationId}`;
    assert.equal(distinct!.n, n);
  });
});
