import assert from 'node:assert/strict';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/** Every error code of the invoice routes, provoked through HTTP, with nothing written when it is refused. */
describe('invoice errors', () => {
  let t: TestApp;
  let org: TestOrg;
  let customerId: string;
  const line = { description: 'Vare', quantity: 1, unitPriceOere: 1000 };

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg();
    customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'person', name: 'P' } })).body.data.id;
  });
  after(() => t.close());

  const count = async () => (await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM invoices WHERE organization_id = ${org.organizationId}`)[0]!.n;

  const business: [string, Record<string, unknown>, string, string][] = [
    ['VAT rate over 100 %', { ...line, vatRateBps: 10001 }, 'invalid_vat_rate', '/lines/0/vatRateBps'],
    ['negative VAT rate', { ...line, vatRateBps: -2500 }, 'invalid_vat_rate', '/lines/0/vatRateBps'],
    ['0 % without a reason', { ...line, vatRateBps: 0 }, 'vat_exemption_reason_required', '/lines/0/vatExemptionReason'],
    ['a reason with 25 %', { ...line, vatExemptionReason: 'EKSPORT' }, 'vat_exemption_reason_not_allowed', '/lines/0/vatExemptionReason'],
    ['a percent discount over 100', { ...line, discount: { type: 'percent', value: 101 } }, 'invalid_discount', '/lines/0/discount/value'],
    ['an amount discount over the line', { ...line, discount: { type: 'amount', value: 1001 } }, 'invalid_discount', '/lines/0/discount/value'],
    ['a total beyond exact integers', { ...line, quantity: 999999, unitPriceOere: 100_000_000_000 }, 'amount_out_of_range', '/lines/0'],
  ];
  for (const [what, l, code, path] of business) {
    it(`422 ${code} for ${what}, nothing written`, async () => {
      const before = await count();
      const res = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines: [line, l].slice(1) } });
      assert.equal(res.status, 422);
      assert.equal(res.body.error.code, code);
      assert.equal(res.body.error.details[0].path, path);
      assert.equal(await count(), before);
    });
  }

  // Schema validation answers before any customer is looked up, so a well-formed id is enough here.
  const someCustomer = '0190a8a0-0000-7000-8000-000000000001';
  const invalid: [string, Record<string, unknown>, string][] = [
    ['no lines', { customerId: someCustomer, lines: [] }, '/lines'],
    ['101 lines', { customerId: someCustomer, lines: Array(101).fill(line) }, '/lines'],
    ['quantity 0', { customerId: someCustomer, lines: [{ ...line, quantity: 0 }] }, '/lines/0/quantity'],
    ['quantity over 999999', { customerId: someCustomer, lines: [{ ...line, quantity: 1000000 }] }, '/lines/0/quantity'],
    ['negative price', { customerId: someCustomer, lines: [{ ...line, unitPriceOere: -1 }] }, '/lines/0/unitPriceOere'],
    ['price over the bound', { customerId: someCustomer, lines: [{ ...line, unitPriceOere: 100_000_000_001 }] }, '/lines/0/unitPriceOere'],
    ['fractional price', { customerId: someCustomer, lines: [{ ...line, unitPriceOere: 10.5 }] }, '/lines/0/unitPriceOere'],
    ['empty description', { customerId: someCustomer, lines: [{ ...line, description: '' }] }, '/lines/0/description'],
    ['description of 501', { customerId: someCustomer, lines: [{ ...line, description: 'd'.repeat(501) }] }, '/lines/0/description'],
    ['unit of 21', { customerId: someCustomer, lines: [{ ...line, unit: 'u'.repeat(21) }] }, '/lines/0/unit'],
    ['accountId of 101', { customerId: someCustomer, lines: [{ ...line, accountId: 'a'.repeat(101) }] }, '/lines/0/accountId'],
    ['unknown discount type', { customerId: someCustomer, lines: [{ ...line, discount: { type: 'free', value: 1 } }] }, '/lines/0/discount/type'],
    ['negative discount', { customerId: someCustomer, lines: [{ ...line, discount: { type: 'amount', value: -1 } }] }, '/lines/0/discount/value'],
    ['an impossible due date', { customerId: someCustomer, lines: [line], dueDate: '2026-02-30' }, '/dueDate'],
    ['a due date in year 0', { customerId: someCustomer, lines: [line], dueDate: '0000-12-31' }, '/dueDate'],
    ['payment terms of 366', { customerId: someCustomer, lines: [line], paymentTermsDays: 366 }, '/paymentTermsDays'],
    ['heading of 61', { customerId: someCustomer, lines: [line], heading: 'h'.repeat(61) }, '/heading'],
    ['message of 2001', { customerId: someCustomer, lines: [line], message: 'm'.repeat(2001) }, '/message'],
    ['customerReference of 141', { customerId: someCustomer, lines: [line], customerReference: 'r'.repeat(141) }, '/customerReference'],
    ['senderReference of 141', { customerId: someCustomer, lines: [line], senderReference: 'r'.repeat(141) }, '/senderReference'],
    ['empty externalReference', { customerId: someCustomer, lines: [line], externalReference: '' }, '/externalReference'],
    ['customerId not a UUID', { customerId: 'abc', lines: [line] }, '/customerId'],
    ['an unknown property', { customerId: someCustomer, lines: [line], status: 'issued' }, '/status'],
    ['an unknown line property', { customerId: someCustomer, lines: [{ ...line, netOere: 5 }] }, '/lines/0/netOere'],
  ];
  for (const [what, body, path] of invalid) {
    it(`400 validation_failed for ${what}`, async () => {
      const res = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), JSON.stringify(res.body.error.details));
    });
  }

  it('refuses an issue that could take what one customer owes past 2^53 − 1 øre (422 amount_out_of_range, no number used); the balance up to it is exact', async () => {
    const big = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Stor Kunde' } })).body.data.id;
    const exempt = { description: 'Anlæg', vatRateBps: 0, vatExemptionReason: 'ML13' };
    const issue = (quantity: number, unitPriceOere: number) =>
      call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId: big, lines: [{ ...exempt, quantity, unitPriceOere }] } });
    const first = await issue(90071, 100_000_000_000);
    assert.equal(first.status, 201, first.raw);
    assert.equal(first.body.data.grossOere, 9_007_100_000_000_000);
    const tooMuch = await issue(1, 99_254_740_992);
    assert.equal(tooMuch.status, 422, tooMuch.raw);
    assert.equal(tooMuch.body.error.code, 'amount_out_of_range');
    const exactly = await issue(1, 99_254_740_991);
    assert.equal(exactly.status, 201, exactly.raw);
    assert.equal(exactly.body.data.number, first.body.data.number + 1, 'the refused issue used no number');
    const balance = await call(t.app, 'GET', `/v1/customers/${big}/balance`, { key: org.apiKey });
    assert.equal(balance.status, 200, balance.raw);
    assert.equal(balance.body.data.outstandingOere, Number.MAX_SAFE_INTEGER);
  });

  it('accepts a due date before the issue date (overdue at once); 422 invalid_due_date only past the year 9999', async () => {
    const draft = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines: [line], paymentTermsDays: 14 } })).body.data;
    const far = await call(t.app, 'POST', `/v1/invoices/${draft.id}/issue`, { key: org.apiKey, body: { issueDate: '9999-12-25' } });
    assert.equal(far.status, 422);
    assert.equal(far.body.error.code, 'invalid_due_date');
    const ok = await call(t.app, 'POST', `/v1/invoices/${draft.id}/issue`, { key: org.apiKey, body: { issueDate: '2026-03-10', dueDate: '2026-03-01' } });
    assert.equal(ok.status, 200);
    assert.deepEqual([ok.body.data.issueDate, ok.body.data.dueDate], ['2026-03-10', '2026-03-01']);
  });

  it('finds one inline customer under concurrency: ten parallel creates naming a new customer make one @cluster', async () => {
    const ref = `inline-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customer: { type: 'company', name: 'Ny Kunde', externalReference: ref }, lines: [line] } }),
      ),
    );
    assert.deepEqual(results.map((r) => r.status), Array(10).fill(201));
    assert.equal(new Set(results.map((r) => r.body.data.customerId)).size, 1);
    const rows = await testDb().db.sql`SELECT id FROM customers WHERE organization_id = ${org.organizationId} AND external_reference = ${ref}`;
    assert.equal(rows.length, 1);
  });

  it('422 invoice_not_creditable for a draft; 400 for a reason outside 1..500', async () => {
    const draft = (await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId, lines: [line] } })).body.data;
    const res = await call(t.app, 'POST', `/v1/invoices/${draft.id}/credit`, { key: org.apiKey, body: { reason: 'x' } });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, 'invoice_not_creditable');
    for (const body of [{}, { reason: '' }, { reason: 'r'.repeat(501) }]) {
      assert.equal((await call(t.app, 'POST', `/v1/invoices/${draft.id}/credit`, { key: org.apiKey, body })).status, 400);
    }
  });

  it('the issue and send query flags are part of the idempotency fingerprint @cluster', async () => {
    const key = `flags-${Date.now()}`;
    const body = { customerId, lines: [line] };
    assert.equal((await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body, idempotencyKey: key })).status, 201);
    const withFlag = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body, idempotencyKey: key });
    assert.equal(withFlag.status, 409);
    assert.equal(withFlag.body.error.code, 'idempotency_conflict');
  });
});
