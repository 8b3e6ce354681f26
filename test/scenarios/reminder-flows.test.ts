import assert from 'node:assert/strict';
import { SCOPES } from '../../contracts/scopes.ts';
import { addDays } from '../../services/shared/clock.ts';
import { call, createTestKey, testDb } from '../helpers/context.ts';
import { startScenario, type Scenario } from '../helpers/scenario.ts';

/**
 * The dunning engine follows an invoice's pinned reminder flow version (docs/reminder-flows.md, "Pinning") on a
 * sandbox clock, against a real restate-server: a flow written, approved by a second key and activated duns the
 * invoices issued afterwards; one issued before keeps the reminder settings, one issued under version 1 keeps
 * version 1 after version 2 is activated. Steps for another customer type are skipped, the law's 10-day floor binds a
 * graph with a 5-day gap, a letter-only step goes by letter, and a collections step collects.
 */
describe('scenario: reminder flows', function () {
  this.timeout(240_000);
  let s: Scenario;
  let approver: string;

  before(async () => {
    s = await startScenario({ orgName: 'Flow Test ApS', plan: 'pro' });
    approver = await createTestKey(s.org, [...SCOPES]);
  });
  after(async () => {
    await s?.close();
  });

  const PERSON = { type: 'person', name: 'Jens Skyldner', email: 'jens@skyldner.dk', address: { street: 'Skyldnervej 3', postalCode: '8000', city: 'Aarhus C' } };
  const COMPANY = { type: 'company', name: 'Kunde A/S', cvr: '87654321', email: 'bogholderi@kunde.dk', address: { street: 'Kundevej 1', postalCode: '8000', city: 'Aarhus C' } };
  const COMPANY_NO_ADDRESS = { type: 'company', name: 'Postløs A/S', cvr: '11223344', email: 'bogholderi@postloes.dk' };

  interface HistoryItem {
    reminderNumber: number | null;
    type: string;
    feeOere: number;
    channel: string | null;
    status: string;
    failureCode: string | null;
    demandLetter: boolean;
    deadline: string;
  }
  const history = async (id: string): Promise<{ data: HistoryItem[]; meta: { maxReminders: number; nextReminder: unknown } }> => {
    const res = await call(s.api.app, 'GET', `/v1/invoices/${id}/reminders`, { key: s.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body;
  };
  /** [days after due, number, fee, channel, status, failure, demand letter] of each reminder. */
  const taken = async (id: string, due: string) =>
    (await history(id)).data.map((r) => [
      Math.round((Date.parse(addDays(r.deadline, -10)) - Date.parse(due)) / 86_400_000),
      r.reminderNumber,
      r.feeOere,
      r.channel,
      r.status,
      r.failureCode,
      r.demandLetter,
    ]);
  /** A flow version written by the organisation's key, approved by the second key, activated; its version number. */
  const activateFlow = async (key: string, steps: unknown[]): Promise<number> => {
    const created = await call(s.api.app, 'POST', '/v1/reminder-flows', { key: s.org.apiKey, body: { key, name: `Flow ${key}`, graph: { steps } } });
    assert.equal(created.status, 201, created.raw);
    const v = created.body.data.version as number;
    const approved = await call(s.api.app, 'POST', `/v1/reminder-flows/${key}/versions/${v}/approve`, { key: approver });
    assert.equal(approved.status, 200, approved.raw);
    const activated = await call(s.api.app, 'POST', `/v1/reminder-flows/${key}/versions/${v}/activate`, { key: s.org.apiKey, body: { active: true } });
    assert.equal(activated.status, 200, activated.raw);
    return v;
  };
  const advanceTo = async (date: string) => {
    const today = await s.today();
    const days = Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / 86_400_000);
    assert.ok(days >= 1, `the clock is at ${today}, past ${date}`);
    await s.advance(days);
  };

  it('invoices follow the version pinned at issue: before any activation the settings, version 1 after version 2 is active', async () => {
    const before = await s.issue({ customerId: await s.customer(COMPANY), paymentTermsDays: 14 });
    assert.equal(await activateFlow('MAIN', [
      { id: 'r1', action: 'reminder', daysAfterDue: 5, fee: 2500, channel: 'email' },
      { id: 'r2', action: 'reminder', daysAfterDue: 20, fee: 2500, channel: 'email' },
    ]), 1);
    const underV1 = await s.issue({ customerId: await s.customer(COMPANY), paymentTermsDays: 14 });
    assert.equal(await activateFlow('MAIN', [{ id: 'only', action: 'reminder', daysAfterDue: 3, fee: 1000, channel: 'email' }]), 2);
    const underV2 = await s.issue({ customerId: await s.customer(COMPANY), paymentTermsDays: 14 });
    const due = before.dueDate;
    assert.equal(underV1.dueDate, due);
    assert.equal(underV2.dueDate, due);
    assert.deepEqual(
      [(await history(before.id)).meta, (await history(underV1.id)).meta, (await history(underV2.id)).meta],
      [
        { maxReminders: 3, nextReminder: { type: 'reminder', reminderNumber: 1, date: addDays(due, 7) } },
        { maxReminders: 2, nextReminder: { type: 'reminder', reminderNumber: 1, date: addDays(due, 5) } },
        { maxReminders: 1, nextReminder: { type: 'reminder', reminderNumber: 1, date: addDays(due, 3) } },
      ],
    );
    await advanceTo(addDays(due, 30));
    // The settings: days 7, 14 → 17 (the floor), 21 → 27, at the statutory fee.
    assert.deepEqual(await taken(before.id, due), [
      [7, 1, 10_000, 'email', 'sent', null, false],
      [17, 2, 10_000, 'email', 'sent', null, false],
      [27, 3, 10_000, 'email', 'sent', null, true],
    ]);
    // Version 1, not version 2, though version 2 is the active one now.
    assert.deepEqual(await taken(underV1.id, due), [
      [5, 1, 2500, 'email', 'sent', null, false],
      [20, 2, 2500, 'email', 'sent', null, true],
    ]);
    assert.deepEqual(await taken(underV2.id, due), [[3, 1, 1000, 'email', 'sent', null, true]]);
  });

  it('a company-only step is skipped for a person; a 5-day gap still charges fees 10 days apart; a letter-only step', async () => {
    await activateFlow('TYPES', [
      { id: 'r1', action: 'reminder', daysAfterDue: 7, fee: 'statutory', channel: 'email_or_letter' },
      { id: 'b2b', action: 'reminder', daysAfterDue: 12, fee: 5000, channel: 'email', when: { customerType: 'company' } },
      { id: 'letter', action: 'reminder', daysAfterDue: 17, fee: 'statutory', channel: 'letter' },
    ]);
    const person = await s.issue({ customerId: await s.customer(PERSON), paymentTermsDays: 14 });
    const company = await s.issue({ customerId: await s.customer(COMPANY), paymentTermsDays: 14 });
    const noAddress = await s.issue({ customerId: await s.customer(COMPANY_NO_ADDRESS), paymentTermsDays: 14 });
    const due = person.dueDate;
    assert.deepEqual([(await history(person.id)).meta.maxReminders, (await history(company.id)).meta.maxReminders], [2, 3]);
    await advanceTo(addDays(due, 30));
    // The person: reminder 1 by e-mail, the letter step (their demand letter) 10 days later, by letter.
    assert.deepEqual(await taken(person.id, due), [
      [7, 1, 10_000, 'email', 'sent', null, false],
      [17, 2, 10_000, 'letter', 'sent', null, true],
    ]);
    // The company: the B2B step planned on day 12 waits for day 17 (10 days after the first fee), the letter for 27.
    assert.deepEqual(await taken(company.id, due), [
      [7, 1, 10_000, 'email', 'sent', null, false],
      [17, 2, 5000, 'email', 'sent', null, false],
      [27, 3, 10_000, 'letter', 'sent', null, true],
    ]);
    // No postal address: the letter step fails, and charges nothing.
    assert.deepEqual(await taken(noAddress.id, due), [
      [7, 1, 10_000, 'email', 'sent', null, false],
      [17, 2, 5000, 'email', 'sent', null, false],
      [27, 3, 0, null, 'failed', 'customer_address_missing', true],
    ]);
  });

  it('a collections step collects on its day; collect before the pinned plan is done is reminder_flow_incomplete', async () => {
    await activateFlow('COLLECT', [
      { id: 'r1', action: 'reminder', daysAfterDue: 7, channel: 'email' },
      { id: 'collect', action: 'collections', daysAfterDue: 20 },
    ]);
    const inv = await s.issue({ customerId: await s.customer(PERSON), paymentTermsDays: 14 });
    const paid = await s.issue({ customerId: await s.customer(PERSON), paymentTermsDays: 14 });
    const due = inv.dueDate;
    await advanceTo(addDays(due, 2));
    const early = await call(s.api.app, 'POST', `/v1/invoices/${inv.id}/collect`, { key: s.org.apiKey });
    assert.equal(early.status, 422, early.raw);
    assert.equal(early.body.error.code, 'reminder_flow_incomplete');
    assert.match(early.body.error.message, /0 of its 1 reminders/);
    await advanceTo(addDays(due, 10));
    await s.pay(paid.id, paid.grossOere);
    await advanceTo(addDays(due, 19));
    assert.equal((await s.invoice(inv.id)).status, 'overdue');
    await advanceTo(addDays(due, 20));
    assert.equal((await s.invoice(inv.id)).status, 'collections');
    const cases = await testDb().db.sql`SELECT id FROM collection_cases WHERE organization_id = ${s.org.organizationId} AND invoice_id = ${inv.id}`;
    assert.equal(cases.length, 1);
    // The paid invoice (its fee left aside) is not collected.
    assert.notEqual((await s.invoice(paid.id)).status, 'collections');
    assert.deepEqual(await taken(inv.id, due), [[7, 1, 10_000, 'email', 'sent', null, true]]);
  });
});
