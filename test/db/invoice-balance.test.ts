import assert from 'node:assert/strict';
import { balanceTerms } from '../../services/invoices/invoice-queries.ts';
import { invoiceBalanceOere, type BalanceTerms } from '../../services/invoices/invoice-balance.ts';
import { copenhagenToday } from '../../services/shared/clock.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/**
 * An invoice's balance has one definition with two twins: the SQL function `invoice_balance_oere`
 * (028_invoice_balance.sql), which the balance statements call, and `invoiceBalanceOere`, which the API computes an
 * invoice read's balanceOere with. They agree over a table of terms, and over real invoices with fees, partial
 * payments, overpayments and credit notes, their terms summed from the rows as every reader sums them.
 */
describe('invoice balance: the SQL function and its TypeScript twin agree', () => {
  const sql = () => testDb().db.sql;

  const sqlBalance = async (t: { [K in keyof BalanceTerms]: number | null }): Promise<number> => {
    const [row] = await sql()<{ balance: string }[]>`
      SELECT invoice_balance_oere(${t.grossOere}::bigint, ${t.feesOere}::numeric, ${t.paidOere}::numeric, ${t.creditedOere}::numeric)::text AS balance`;
    return Number(row!.balance);
  };

  const TABLE: [string, BalanceTerms, number][] = [
    ['nothing paid', { grossOere: 100_000, feesOere: 0, paidOere: 0, creditedOere: 0 }, 100_000],
    ['a reminder fee', { grossOere: 100_000, feesOere: 10_000, paidOere: 0, creditedOere: 0 }, 110_000],
    ['three fees', { grossOere: 100_000, feesOere: 30_000, paidOere: 0, creditedOere: 0 }, 130_000],
    ['a partial payment', { grossOere: 100_000, feesOere: 0, paidOere: 30_000, creditedOere: 0 }, 70_000],
    ['fees and a partial payment', { grossOere: 100_000, feesOere: 20_000, paidOere: 105_000, creditedOere: 0 }, 15_000],
    ['paid in full', { grossOere: 100_000, feesOere: 10_000, paidOere: 110_000, creditedOere: 0 }, 0],
    ['an overpayment', { grossOere: 100_000, feesOere: 0, paidOere: 150_000, creditedOere: 0 }, -50_000],
    ['credited', { grossOere: 100_000, feesOere: 0, paidOere: 0, creditedOere: 100_000 }, 0],
    ['credited after a partial payment', { grossOere: 100_000, feesOere: 0, paidOere: 40_000, creditedOere: 100_000 }, -40_000],
    ['credited with a fee outstanding', { grossOere: 100_000, feesOere: 10_000, paidOere: 0, creditedOere: 100_000 }, 10_000],
    ['a credit note itself (credits its own gross)', { grossOere: 25_000, feesOere: 0, paidOere: 0, creditedOere: 25_000 }, 0],
    ['beyond 32 bits', { grossOere: 90_000_000_000_000, feesOere: 10_000, paidOere: 1, creditedOere: 0 }, 90_000_000_009_999],
  ];

  for (const [name, terms, expected] of TABLE) {
    it(`${name}: ${expected} øre`, async () => {
      assert.equal(invoiceBalanceOere(terms), expected);
      assert.equal(await sqlBalance(terms), expected);
    });
  }

  it('a NULL term (a LEFT JOIN that found no fee, payment or credit note) counts as 0 in SQL', async () => {
    assert.equal(await sqlBalance({ grossOere: 100_000, feesOere: null, paidOere: null, creditedOere: null }), 100_000);
    assert.equal(await sqlBalance({ grossOere: 100_000, feesOere: 10_000, paidOere: null, creditedOere: 30_000 }), 80_000);
  });

  it('is inlined into the statement that calls it: the plan computes the expression, it calls no function', async () => {
    const terms = balanceTerms(sql());
    const plan = await sql()<{ 'QUERY PLAN': unknown }[]>`
      EXPLAIN (VERBOSE, FORMAT JSON)
      SELECT invoice_balance_oere(i.gross_oere, ${terms.fees}, ${terms.paid}, ${terms.credited}) AS balance
      FROM invoices i WHERE i.organization_id = ${uuidv7()} AND i.type = 'invoice'`;
    const text = JSON.stringify(plan[0]!['QUERY PLAN']);
    assert.doesNotMatch(text, /invoice_balance_oere/);
    assert.match(text, /gross_oere/);
  });

  describe('over real invoices', () => {
    let t: TestApp;
    let org: TestOrg;
    let customerId: string;
    const line = (oere: number) => ({ description: 'Ydelse', quantity: 1, unitPriceOere: oere, vatRateBps: 0, vatExemptionReason: 'ML13' });

    before(async () => {
      t = await startTestApp();
      org = await createTestOrg({ name: 'Saldo-tvilling ApS' });
      customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
    });
    after(async () => t.close());

    const issue = async (grossOere: number): Promise<string> => {
      const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId, lines: [line(grossOere)] } });
      assert.equal(res.status, 201, res.raw);
      return res.body.data.id;
    };
    const pay = async (invoiceId: string, amountOere: number) => {
      const res = await call(t.app, 'POST', `/v1/invoices/${invoiceId}/payments`, { key: org.apiKey, body: { amountOere, paymentDate: copenhagenToday(new Date()) } });
      assert.equal(res.status, 201, res.raw);
    };
    const fee = async (invoiceId: string, amountOere: number) => {
      await sql()`
        INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere)
        VALUES (${uuidv7()}, ${org.organizationId}, ${invoiceId}, ${customerId}, 'reminder', ${amountOere})`;
    };
    const credit = async (invoiceId: string): Promise<string> => {
      const res = await call(t.app, 'POST', `/v1/invoices/${invoiceId}/credit`, { key: org.apiKey, body: { reason: 'Fejl' } });
      assert.equal(res.status, 201, res.raw);
      return res.body.data.id;
    };

    it('the API’s balanceOere (the TypeScript twin) equals the SQL function over the summed rows, invoice by invoice', async () => {
      const untouched = await issue(100_000);
      const withFees = await issue(100_000);
      await fee(withFees, 10_000);
      await fee(withFees, 10_000);
      await pay(withFees, 50_000);
      const partial = await issue(80_000);
      await pay(partial, 30_000);
      const overpaid = await issue(60_000);
      await pay(overpaid, 90_000);
      const credited = await issue(40_000);
      await pay(credited, 15_000);
      const note = await credit(credited);

      const expected: [string, number][] = [
        [untouched, 100_000],
        [withFees, 70_000],
        [partial, 50_000],
        [overpaid, -30_000],
        [credited, -15_000],
      ];
      const terms = balanceTerms(sql());
      for (const [id, balance] of expected) {
        const read = await call(t.app, 'GET', `/v1/invoices/${id}`, { key: org.apiKey });
        assert.equal(read.status, 200, read.raw);
        const [row] = await sql()<{ balance: string }[]>`
          SELECT invoice_balance_oere(i.gross_oere, ${terms.fees}, ${terms.paid}, ${terms.credited})::text AS balance
          FROM invoices i WHERE i.organization_id = ${org.organizationId} AND i.id = ${id}`;
        assert.equal(read.body.data.balanceOere, balance, `balanceOere of ${id}`);
        assert.equal(Number(row!.balance), balance, `invoice_balance_oere of ${id}`);
      }
      // A credit note's own balance is 0: it credits its whole gross.
      const noteRead = await call(t.app, 'GET', `/v1/invoices/${note}`, { key: org.apiKey });
      assert.equal(noteRead.body.data.balanceOere, 0);

      // The customer balance sums the same balances: positive ones outstanding, negative ones the customer's credit.
      const customer = await call(t.app, 'GET', `/v1/customers/${customerId}/balance`, { key: org.apiKey });
      assert.equal(customer.status, 200, customer.raw);
      assert.equal(customer.body.data.outstandingOere, 100_000 + 70_000 + 50_000);
      assert.equal(customer.body.data.creditOere, -30_000 - 15_000);
    });
  });
});
