import assert from 'node:assert/strict';
import { addDays } from '../../services/shared/clock.ts';
import { call, testDb } from '../helpers/context.ts';
import { loadReminderView } from '../../services/reminders/reminder-document.ts';
import { reminderTemplateModel } from '../../activities/pdf/reminder-template.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { interestByHand, statutoryRateOn as rateOn } from '../helpers/interest-by-hand.ts';
import { startScenario, type Scenario } from '../helpers/scenario.ts';

/**
 * Late-payment interest and the 310 kr compensation at reminder steps, on a sandbox clock through the whole stack
 * (docs/reminders.md, "Interest" and "Compensation"). The expected interest is worked out here by hand from the rule
 * (principal × statutory rate × days / 365 per half-year piece, rounded half up), not by the service's own module.
 */
describe('scenario: late-payment interest and compensation at reminder steps', function () {
  this.timeout(240_000);
  let s: Scenario;
  before(async () => {
    s = await startScenario({ orgName: 'Renter ApS' });
    const res = await call(s.api.app, 'PUT', '/v1/reminder-settings', { key: s.org.apiKey, body: reminderSettingsBody({ lateInterest: 'statutory', compensation: true }) });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual([res.body.data.lateInterest, res.body.data.compensation], ['statutory', true]);
  });
  after(async () => {
    await s?.close();
  });

  const byHand = interestByHand;
  const history = async (id: string) =>
    (await call(s.api.app, 'GET', `/v1/invoices/${id}/reminders`, { key: s.org.apiKey })).body.data as { reminderNumber: number; feeOere: number; interestOere: number; compensationOere: number; sentAt: string }[];

  it('posts the interest accrued at each reminder step and charges the compensation once, on the first step of a business customer', async () => {
    const customerId = await s.customer();
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    const due = inv.dueDate;
    await s.advance(14 + 30);
    const steps = await history(inv.id);
    const dates = [addDays(due, 7), addDays(due, 17), addDays(due, 27)];
    const expected = [
      await byHand(inv.grossOere, due, dates[0]!),
      await byHand(inv.grossOere, dates[0]!, dates[1]!),
      await byHand(inv.grossOere, dates[1]!, dates[2]!),
    ];
    assert.deepEqual(
      steps.map((h) => [h.reminderNumber, h.feeOere, h.interestOere, h.compensationOere]),
      [[1, 10_000, expected[0], 31_000], [2, 10_000, expected[1], 0], [3, 10_000, expected[2], 0]],
    );
    assert.ok(expected.every((e) => e > 0), `${expected}`);
    const read = await s.invoice(inv.id);
    const interest = expected.reduce((a, b) => a + b, 0);
    assert.deepEqual([read.reminderFeeOere, read.interestOere, read.compensationOere, read.balanceOere], [30_000, interest, 31_000, inv.grossOere + 30_000 + 31_000 + interest]);
    // One timeline entry per posted piece, each with its days and rate.
    const timeline = (await call(s.api.app, 'GET', `/v1/invoices/${inv.id}/timeline`, { key: s.org.apiKey })).body.data as { code: string; data: { amountOere: number; fromDate: string; toDate: string; rateBp: number } }[];
    const posted = timeline.filter((e) => e.code === 'interest_posted');
    assert.equal(posted.reduce((sum, e) => sum + e.data.amountOere, 0), interest);
    assert.equal(posted[0]!.data.fromDate, addDays(due, 1));
    assert.equal(posted.at(-1)!.data.toDate, dates[2]);
    assert.equal(timeline.filter((e) => e.code === 'compensation').length, 1);
    // The letters: the second shows what the first charged as before, and its own interest piece by piece with the rate.
    const rows = await testDb().db.sql<{ id: string }[]>`SELECT id FROM reminders WHERE invoice_id = ${inv.id} ORDER BY sent_on`;
    const second = await loadReminderView(testDb().db.sql, testDb().keyring, s.org.organizationId, rows[1]!.id);
    assert.ok(second);
    assert.deepEqual([second.interestBeforeOere, second.compensationBeforeOere, second.compensationOere], [expected[0], 31_000, 0]);
    assert.equal(second.interest.reduce((sum, p) => sum + p.amountOere, 0), expected[1]);
    assert.equal(second.totalOere, inv.grossOere + 20_000 + expected[0]! + 31_000 + expected[1]!);
    const model = reminderTemplateModel(second);
    const labels = model.amounts.map((a) => a.label);
    assert.ok(labels.includes('Renter tidligere tilskrevet') && labels.includes('Kompensation tidligere opkrævet'), labels.join(' | '));
    assert.ok(labels.some((l) => /^Renter .+ \(9,75 % p\.a\., rentelovens § 5\)$/.test(l)), labels.join(' | '));
    const first = reminderTemplateModel((await loadReminderView(testDb().db.sql, testDb().keyring, s.org.organizationId, rows[0]!.id))!);
    assert.ok(first.amounts.some((a) => a.label === 'Kompensation, rentelovens § 9 a, stk. 3'));
    // The reminder events carry the same amounts.
    const events = (await call(s.api.app, 'GET', '/v1/events?limit=200', { key: s.org.apiKey })).body.data as { type: string; data: { invoiceId: string; interestOere: number; compensationOere: number } }[];
    const sent = events.filter((e) => e.type === 'reminder.sent' && e.data.invoiceId === inv.id);
    assert.deepEqual(sent.map((e) => [e.data.interestOere, e.data.compensationOere]), [[expected[0], 31_000], [expected[1], 0], [expected[2], 0]]);
  });

  it('a person is never charged the compensation; interest still accrues', async () => {
    const customerId = await s.customer({ type: 'person', name: 'Jens Hansen', email: 'jens@example.dk' });
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    await s.advance(14 + 8);
    const [first] = await history(inv.id);
    assert.deepEqual([first!.compensationOere, first!.interestOere], [0, await byHand(inv.grossOere, inv.dueDate, addDays(inv.dueDate, 7))]);
  });

  it('the compensation comes once per continuous arrears across invoices, and again in a new arrears', async () => {
    const customerId = await s.customer({ type: 'company', name: 'Gentagen A/S', email: 'bogholderi@gentagen.dk' });
    const a = await s.issue({ customerId, paymentTermsDays: 14 });
    const b = await s.issue({ customerId, paymentTermsDays: 20 });
    await s.advance(20 + 8);
    const charged = async (id: string) => (await history(id)).map((h) => h.compensationOere);
    // a's first reminder on day 21 opens the arrears and charges it; b's on day 27 is in the same arrears.
    assert.deepEqual([await charged(a.id), await charged(b.id)], [[31_000], [0]]);
    // Both paid in full: the arrears ends. A later invoice falling overdue starts a new one.
    for (const inv of [a, b]) {
      const now = await s.invoice(inv.id);
      // With what has accrued since the last step on top: a little more than the balance shown clears it.
      assert.equal((await s.pay(inv.id, now.balanceOere + 10_000)).status, 201);
    }
    const c = await s.issue({ customerId, paymentTermsDays: 14 });
    await s.advance(14 + 8);
    assert.deepEqual(await charged(c.id), [31_000]);
  });

  it('the payment that clears the principal posts the interest up to its date first; a credit note likewise', async () => {
    const customerId = await s.customer({ type: 'company', name: 'Betaler A/S', email: 'b@betaler.dk' });
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    await s.advance(14 + 10);
    const today = await s.today();
    const before = await s.invoice(inv.id);
    const paid = await s.pay(inv.id, inv.grossOere, today);
    assert.equal(paid.status, 201, paid.raw);
    // Reminder 1 on due + 7 posted through that day; the payment dated today posts due + 8 … today.
    const expected = await byHand(inv.grossOere, addDays(inv.dueDate, 7), today);
    assert.ok(expected > 0);
    assert.equal(paid.body.meta.outcome, 'partial');
    assert.equal(paid.body.data.interestOere, (before.interestOere as number) + expected);
    assert.equal(paid.body.data.balanceOere, (before.balanceOere) - inv.grossOere + expected);
    const read = await s.invoice(inv.id);
    assert.deepEqual([read.interestOere, read.balanceOere], [paid.body.data.interestOere, paid.body.data.balanceOere]);
    // Nothing more accrues without a principal: a later step posts nothing.
    const [row] = await testDb().db.sql<{ through: string }[]>`SELECT interest_posted_through::text AS through FROM invoices WHERE id = ${inv.id}`;
    assert.equal(row!.through, today);

    const other = await s.issue({ customerId, paymentTermsDays: 14 });
    await s.advance(14 + 9);
    const creditedOn = await s.today();
    const mid = await s.invoice(other.id);
    const note = await call(s.api.app, 'POST', `/v1/invoices/${other.id}/credit`, { key: s.org.apiKey, body: { reason: 'Fejl' } });
    assert.equal(note.status, 201, note.raw);
    const afterCredit = await s.invoice(other.id);
    assert.equal(afterCredit.interestOere, (mid.interestOere as number) + (await byHand(other.grossOere, addDays(other.dueDate, 7), creditedOn)));
  });

  it('shows the interest accrued since the last posting; the balance plus it pays the invoice in full today', async () => {
    const customerId = await s.customer({ type: 'company', name: 'Regner A/S', email: 'r@regner.dk' });
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    assert.equal((await s.invoice(inv.id)).interestAccruedOere, 0, 'nothing before the due date');
    await s.advance(14 + 7 + 4);
    const today = await s.today();
    const read = await s.invoice(inv.id);
    const accrued = await byHand(inv.grossOere, addDays(inv.dueDate, 7), today);
    assert.ok(accrued > 0);
    assert.equal(read.interestAccruedOere, accrued);
    const list = (await call(s.api.app, 'GET', `/v1/invoices?customerId=${customerId}`, { key: s.org.apiKey })).body.data as { id: string; interestAccruedOere: number }[];
    assert.equal(list.find((i) => i.id === inv.id)!.interestAccruedOere, accrued);
    const paid = await s.pay(inv.id, read.balanceOere + accrued, today);
    assert.equal(paid.status, 201, paid.raw);
    assert.equal(paid.body.meta.outcome, 'paid_in_full');
    assert.deepEqual([paid.body.data.status, paid.body.data.balanceOere, paid.body.data.interestAccruedOere], ['paid', 0, 0]);
  });

  it('the hand-over posts the interest up to its date; the partner receives interest, its rate and the compensation as claim items', async () => {
    const put = await call(s.api.app, 'PUT', '/v1/reminder-settings', { key: s.org.apiKey, body: reminderSettingsBody({ lateInterest: 'statutory', compensation: true, autoCollections: true }) });
    assert.equal(put.status, 200, put.raw);
    const customerId = await s.customer({ type: 'company', name: 'Inkasso A/S', email: 'i@inkasso.dk' });
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    // Reminders on due + 7, + 17, + 27 (the demand letter); collected the day after its deadline; handed over on + 11.
    await s.advance(14 + 27 + 11 + 1);
    const [c] = await testDb().db.sql<{ id: string; handed_over_at: Date | null }[]>`SELECT id, handed_over_at FROM collection_cases WHERE invoice_id = ${inv.id}`;
    assert.ok(c?.handed_over_at, 'handed over');
    const read = await s.invoice(inv.id);
    const { readdirSync, readFileSync } = await import('node:fs');
    const file = readdirSync(s.collectionsDir)
      .map((f) => JSON.parse(readFileSync(`${s.collectionsDir}/${f}`, 'utf8')) as { case: { id: string }; handedOverOn: string; claims: Record<string, unknown>[]; outstandingOere: number })
      .find((d) => d.case.id === c.id);
    assert.ok(file, 'the hand-over file');
    // Posted through the hand-over's date: the demand letter's share and then the hand-over's.
    const handOverDay = file.handedOverOn;
    const [through] = await testDb().db.sql<{ through: string }[]>`SELECT interest_posted_through::text AS through FROM invoices WHERE id = ${inv.id}`;
    assert.equal(through!.through, handOverDay);
    const steps = await history(inv.id);
    const atHandOver = await byHand(inv.grossOere, addDays(inv.dueDate, 27), handOverDay);
    assert.ok(atHandOver > 0);
    assert.equal(read.interestOere, steps.reduce((sum, h) => sum + h.interestOere, 0) + atHandOver);
    const claim = file.claims[0]!;
    assert.deepEqual([claim.feesOere, claim.interestOere, claim.interestRateBp, claim.compensationOere], [30_000, read.interestOere, await rateOn(handOverDay), 31_000]);
    assert.equal(file.outstandingOere, inv.grossOere + 30_000 + (read.interestOere) + 31_000);
  });
});
