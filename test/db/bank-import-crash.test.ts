import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import { call, createTestOrg, newIdempotencyKey, startTestApp, TEST_MASTER_KEY, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { camt053 } from '../helpers/camt053.ts';

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
});
