import assert from 'node:assert/strict';
import { fikPaymentId } from '../../services/payments/fik-payment-id.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

/**
 * FI-kort +71 payment ids on invoices (docs/bank-payments.md): an invoice issued while its organisation has an FI
 * creditor number carries `fik` for life; without one, `fik` is null; drafts and credit notes have none.
 */
describe('FI-kort +71 payment ids on invoices', () => {
  let t: TestApp;
  const lines = [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4500 }];
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const issue = async (org: TestOrg) => {
    const res = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customer: { type: 'company', name: 'Kunde A/S' }, lines } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data as { id: string; number: number; fik: unknown };
  };

  it('an invoice issued under a creditor number carries its payment id, creditor number and +71 line @cluster', async () => {
    const org = await createTestOrg({ fiCreditorNumber: '85799665' });
    const inv = await issue(org);
    const paymentId = fikPaymentId(inv.number);
    assert.equal(paymentId, `${String(inv.number).padStart(14, '0')}${paymentId[14]}`);
    const expected = { type: '71', paymentId, creditorNumber: '85799665', line: `+71<${paymentId}+85799665<` };
    assert.deepEqual(inv.fik, expected);
    const read = await call(t.app, 'GET', `/v1/invoices/${inv.id}`, { key: org.apiKey });
    assert.deepEqual(read.body.data.fik, expected);
    const list = await call(t.app, 'GET', '/v1/invoices', { key: org.apiKey });
    assert.deepEqual(list.body.data.find((i: { id: string }) => i.id === inv.id).fik, expected);
    const [row] = await testDb().db.sql`SELECT fik_payment_id, fik_creditor_number FROM invoices WHERE id = ${inv.id}`;
    assert.deepEqual({ ...row }, { fik_payment_id: paymentId, fik_creditor_number: '85799665' });
  });

  it('never changes afterwards: a new creditor number applies to invoices issued after it, none to those before', async () => {
    const org = await createTestOrg({ fiCreditorNumber: '85799665' });
    const first = await issue(org);
    await testDb().db.sql`UPDATE organizations SET fi_creditor_number = '81234567' WHERE id = ${org.organizationId}`;
    const second = await issue(org);
    await testDb().db.sql`UPDATE organizations SET fi_creditor_number = NULL WHERE id = ${org.organizationId}`;
    const third = await issue(org);
    const fikOf = async (id: string) => (await call(t.app, 'GET', `/v1/invoices/${id}`, { key: org.apiKey })).body.data.fik;
    assert.equal((await fikOf(first.id)).creditorNumber, '85799665');
    assert.deepEqual(await fikOf(second.id), {
      type: '71', paymentId: fikPaymentId(second.number), creditorNumber: '81234567', line: `+71<${fikPaymentId(second.number)}+81234567<`,
    });
    assert.equal(await fikOf(third.id), null);
  });

  it('is null without a creditor number, on drafts, and on credit notes', async () => {
    const plain = await createTestOrg();
    assert.equal((await issue(plain)).fik, null);
    const org = await createTestOrg({ fiCreditorNumber: '85799665' });
    const draft = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customer: { type: 'company', name: 'Kunde A/S' }, lines } });
    assert.equal(draft.status, 201, draft.raw);
    assert.equal(draft.body.data.fik, null);
    const inv = await issue(org);
    const note = await call(t.app, 'POST', `/v1/invoices/${inv.id}/credit`, { key: org.apiKey, body: { reason: 'Fejl' } });
    assert.equal(note.status, 201, note.raw);
    assert.equal(note.body.data.fik, null);
  });
});
