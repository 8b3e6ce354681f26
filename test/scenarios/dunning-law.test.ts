import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { timeBarredOn } from '../../services/law/danish-law.ts';
import { addDays } from '../../services/shared/clock.ts';
import { call, testDb } from '../helpers/context.ts';
import { startScenario, type Invoice, type Scenario } from '../helpers/scenario.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';

/**
 * The dunning engine walked through the calendar as the law reads (docs/reminders.md, "The law" and "Decisions the
 * engine takes"): each story issues invoices through the public API on a sandbox organisation, moves its clock, and
 * reads the reminder history, fees, channels, timeline, events, mails and letters the engine left. Every date is
 * computed from the invoice's due date. Each story has its own customers; stories needing other reminder settings
 * replace them first (settings are per organisation; open invoices of earlier stories have nothing left to take soon).
 */

interface HistoryItem {
  id: string;
  type: string;
  reminderNumber: number | null;
  feeOere: number;
  channel: string | null;
  status: string;
  failureCode: string | null;
  demandLetter: boolean;
  deadline: string;
  source: string;
  sentAt: string;
}
interface History {
  data: HistoryItem[];
  meta: { maxReminders: number; nextReminder: { type: string; reminderNumber: number | null; date: string } | null };
}

/** A business date (Europe/Copenhagen) of an instant. */
const copenhagenDate = (iso: string): string => new Date(iso).toLocaleDateString('sv-SE', { timeZone: 'Europe/Copenhagen' });
const sentOn = (h: HistoryItem) => copenhagenDate(h.sentAt);

function helpers(get: () => Scenario) {
  const req = (method: string, url: string, body?: unknown) => call(get().api.app, method, url, { key: get().org.apiKey, ...(body !== undefined ? { body } : {}) });
  return {
    req,
    async history(id: string): Promise<History> {
      const res = await req('GET', `/v1/invoices/${id}/reminders`);
      assert.equal(res.status, 200, res.raw);
      return res.body as History;
    },
    async timeline(id: string): Promise<{ code: string; at: string; data: Record<string, unknown> }[]> {
      const res = await req('GET', `/v1/invoices/${id}/timeline?limit=100`);
      assert.equal(res.status, 200, res.raw);
      return res.body.data;
    },
    async settings(body: Record<string, unknown>): Promise<void> {
      const res = await req('PUT', '/v1/reminder-settings', reminderSettingsBody(body));
      assert.equal(res.status, 200, res.raw);
    },
    /** Moves the clock to a business date (the story's dates are computed; the clock only moves forward). */
    async advanceTo(date: string): Promise<void> {
      const today = await get().today();
      const days = Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / 86_400_000);
      assert.ok(days >= 0, `the clock is at ${today}, past ${date}`);
      if (days > 0) await get().advance(days);
    },
    /** The invoice's events of a type, oldest first. */
    async eventsOf(invoiceId: string, type: string): Promise<Record<string, unknown>[]> {
      const rows = await testDb().db.sql<{ data: Record<string, unknown> }[]>`
        SELECT data FROM events WHERE organization_id = ${get().org.organizationId} AND entity_id = ${invoiceId} AND type = ${type} ORDER BY id`;
      return rows.map((r) => r.data);
    },
  };
}

const rows = (data: HistoryItem[]) => data.map((h) => [h.type, h.reminderNumber, h.feeOere, h.channel, h.status, sentOn(h), h.deadline]);

describe('scenario: dunning as the law reads', function () {
  this.timeout(180_000);
  let s: Scenario;
  const h = helpers(() => s);

  before(async () => {
    s = await startScenario({ orgName: 'Rykkerloven ApS' });
  });
  after(async () => {
    await s?.close();
  });

  it('a cadence faster than 10 days still lands fee-bearing reminders 10 days apart (due + 1, + 11, + 21)', async () => {
    await h.settings({
      cadence: [
        { reminderNumber: 1, daysAfterDue: 1 },
        { reminderNumber: 2, daysAfterDue: 2 },
        { reminderNumber: 3, daysAfterDue: 3 },
      ],
    });
    const inv = await s.issue({ paymentTermsDays: 14 });
    const due = inv.dueDate;
    await h.advanceTo(addDays(due, 2));
    assert.deepEqual((await h.history(inv.id)).meta.nextReminder, { type: 'reminder', reminderNumber: 2, date: addDays(due, 11) }, 'the § 9 b floor in the plan');
    await h.advanceTo(addDays(due, 30));
    const { data, meta } = await h.history(inv.id);
    assert.deepEqual(rows(data), [
      ['reminder', 1, 10_000, 'email', 'sent', addDays(due, 1), addDays(due, 11)],
      ['reminder', 2, 10_000, 'email', 'sent', addDays(due, 11), addDays(due, 21)],
      ['reminder', 3, 10_000, 'email', 'sent', addDays(due, 21), addDays(due, 31)],
    ]);
    assert.deepEqual(data.map((r) => r.demandLetter), [false, false, true]);
    assert.equal(meta.nextReminder, null);
    assert.equal((await s.invoice(inv.id)).reminderFeeOere, 30_000);
  });

  it('the fourth fee in one continuous arrears is refused across invoices; after the arrears end the fee comes back', async () => {
    await h.settings({});
    const customerId = await s.customer({ type: 'company', name: 'Restance A/S', cvr: '11223344', email: 'bogholderi@restance.dk' });
    const a = await s.issue({ customerId, paymentTermsDays: 14 });
    // B falls due while A is still unpaid, and its first reminder comes after A's third.
    const b = await s.issue({ customerId, paymentTermsDays: 14 + 25 });
    assert.equal(b.dueDate, addDays(a.dueDate, 25));
    await h.advanceTo(addDays(b.dueDate, 22));
    assert.deepEqual(rows((await h.history(a.id)).data), [
      ['reminder', 1, 10_000, 'email', 'sent', addDays(a.dueDate, 7), addDays(a.dueDate, 17)],
      ['reminder', 2, 10_000, 'email', 'sent', addDays(a.dueDate, 17), addDays(a.dueDate, 27)],
      ['reminder', 3, 10_000, 'email', 'sent', addDays(a.dueDate, 27), addDays(a.dueDate, 37)],
    ]);
    // No fee-bearing reminder on B, so no 10-day floor: B's reminders keep the cadence (due + 7, + 14, + 21).
    assert.deepEqual(rows((await h.history(b.id)).data), [
      ['reminder', 1, 0, 'email', 'sent', addDays(b.dueDate, 7), addDays(b.dueDate, 17)],
      ['reminder', 2, 0, 'email', 'sent', addDays(b.dueDate, 14), addDays(b.dueDate, 24)],
      ['reminder', 3, 0, 'email', 'sent', addDays(b.dueDate, 21), addDays(b.dueDate, 31)],
    ]);
    assert.equal((await s.invoice(b.id)).reminderFeeOere, 0);

    // The arrears end: both paid in full (fees included), then a day with nothing overdue.
    await s.pay(a.id, (await s.invoice(a.id)).balanceOere);
    await s.pay(b.id, (await s.invoice(b.id)).balanceOere);
    assert.deepEqual([(await s.invoice(a.id)).status, (await s.invoice(b.id)).status], ['paid', 'paid']);
    await s.advance(1);
    const c = await s.issue({ customerId, paymentTermsDays: 14 });
    await h.advanceTo(addDays(c.dueDate, 7));
    assert.deepEqual(rows((await h.history(c.id)).data), [['reminder', 1, 10_000, 'email', 'sent', addDays(c.dueDate, 7), addDays(c.dueDate, 17)]]);
    await s.pay(c.id, (await s.invoice(c.id)).balanceOere);
  });

  it('the payment reminder is free, comes on due + 3, writes invoice.overdue once, and is not counted', async () => {
    await h.settings({ paymentReminderEnabled: true, paymentReminderDays: 3 });
    const inv = await s.issue({ paymentTermsDays: 14 });
    const due = inv.dueDate;
    await h.advanceTo(addDays(due, 2));
    assert.equal((await s.invoice(inv.id)).status, 'issued');
    assert.deepEqual(await h.eventsOf(inv.id, 'invoice.overdue'), []);
    assert.deepEqual((await h.history(inv.id)).meta.nextReminder, { type: 'payment_reminder', reminderNumber: null, date: addDays(due, 3) });

    await h.advanceTo(addDays(due, 3));
    const first = await h.history(inv.id);
    assert.deepEqual(rows(first.data), [['payment_reminder', null, 0, 'email', 'sent', addDays(due, 3), addDays(due, 13)]]);
    assert.deepEqual(first.meta, { maxReminders: 3, nextReminder: { type: 'reminder', reminderNumber: 1, date: addDays(due, 7) } });
    // The first reminder of any kind makes the invoice overdue, with invoice.overdue (once).
    assert.equal((await s.invoice(inv.id)).status, 'overdue');
    const overdue = await h.eventsOf(inv.id, 'invoice.overdue');
    assert.equal(overdue.length, 1);
    assert.equal(overdue[0]!.reminderId, first.data[0]!.id);

    await h.advanceTo(addDays(due, 30));
    const { data } = await h.history(inv.id);
    assert.deepEqual(rows(data), [
      ['payment_reminder', null, 0, 'email', 'sent', addDays(due, 3), addDays(due, 13)],
      ['reminder', 1, 10_000, 'email', 'sent', addDays(due, 7), addDays(due, 17)],
      ['reminder', 2, 10_000, 'email', 'sent', addDays(due, 17), addDays(due, 27)],
      ['reminder', 3, 10_000, 'email', 'sent', addDays(due, 27), addDays(due, 37)],
    ]);
    assert.deepEqual(data.map((r) => r.demandLetter), [false, false, false, true]);
    const after = await s.invoice(inv.id);
    assert.deepEqual([after.status, after.reminderFeeOere], ['overdue', 30_000]);
    assert.equal((await h.eventsOf(inv.id, 'invoice.overdue')).length, 1, 'invoice.overdue once per invoice');
    await s.pay(inv.id, after.balanceOere);
  });

  it('invoice.overdue on the first numbered reminder when there is no payment reminder, once', async () => {
    await h.settings({});
    const inv = await s.issue({ paymentTermsDays: 14 });
    await h.advanceTo(addDays(inv.dueDate, 6));
    assert.equal((await s.invoice(inv.id)).status, 'issued', 'past due is not yet overdue: no reminder so far');
    await h.advanceTo(addDays(inv.dueDate, 7));
    const [r1] = (await h.history(inv.id)).data;
    assert.equal((await s.invoice(inv.id)).status, 'overdue');
    assert.deepEqual(
      (await h.eventsOf(inv.id, 'invoice.overdue')).map((e) => [e.reminderId, e.dueDate]),
      [[r1!.id, inv.dueDate]],
    );
    await h.advanceTo(addDays(inv.dueDate, 30));
    assert.equal((await h.history(inv.id)).data.length, 3);
    assert.equal((await h.eventsOf(inv.id, 'invoice.overdue')).length, 1);
    await s.pay(inv.id, (await s.invoice(inv.id)).balanceOere);
  });

  it('letter fallback: letters to an address; without one, or without the fallback, failed steps without fees that still count', async () => {
    await h.settings({ letterFallback: true });
    const addressed = await s.customer({
      type: 'person',
      name: 'Jens Jensen',
      address: { street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', country: 'DK' },
    });
    const homeless = await s.customer({ type: 'person', name: 'Uden Adresse', address: { street: 'Vestergade 2' } });
    const byLetter = await s.issue({ customerId: addressed, paymentTermsDays: 14 });
    const noAddress = await s.issue({ customerId: homeless, paymentTermsDays: 14 });
    const due = byLetter.dueDate;
    assert.equal(noAddress.dueDate, due);
    await h.advanceTo(addDays(due, 30));

    const letters = await h.history(byLetter.id);
    assert.deepEqual(rows(letters.data), [
      ['reminder', 1, 10_000, 'letter', 'sent', addDays(due, 7), addDays(due, 17)],
      ['reminder', 2, 10_000, 'letter', 'sent', addDays(due, 17), addDays(due, 27)],
      ['reminder', 3, 10_000, 'letter', 'sent', addDays(due, 27), addDays(due, 37)],
    ]);
    for (const r of letters.data) {
      assert.ok(existsSync(join(s.letterDir, `${r.id}.pdf`)), `the letter PDF of ${r.id}`);
      assert.equal(readFileSync(join(s.letterDir, `${r.id}.pdf`)).subarray(0, 5).toString(), '%PDF-');
      const sidecar = JSON.parse(readFileSync(join(s.letterDir, `${r.id}.json`), 'utf8'));
      assert.deepEqual([sidecar.id, sidecar.organizationId, sidecar.recipient], [
        r.id,
        s.org.organizationId,
        { name: 'Jens Jensen', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', country: 'DK' },
      ]);
    }
    assert.equal((await h.timeline(byLetter.id)).filter((t) => t.code === 'reminder' && t.data.channel === 'letter').length, 3);

    // No street, postal code and city: failed, no fee, and (no fee, no floor) the cadence's own days.
    const failed = await h.history(noAddress.id);
    assert.deepEqual(
      failed.data.map((r) => [r.reminderNumber, r.feeOere, r.channel, r.status, r.failureCode, sentOn(r)]),
      [
        [1, 0, null, 'failed', 'customer_address_missing', addDays(due, 7)],
        [2, 0, null, 'failed', 'customer_address_missing', addDays(due, 14)],
        [3, 0, null, 'failed', 'customer_address_missing', addDays(due, 21)],
      ],
    );
    const unaddressed = await s.invoice(noAddress.id);
    assert.deepEqual([unaddressed.status, unaddressed.reminderFeeOere], ['overdue', 0]);
    const lettersOnDisk = readdirSync(s.letterDir).filter((f) => f.endsWith('.pdf'));
    assert.equal(lettersOnDisk.length, 3, 'no letter for a failed step');

    // Without the fallback and without an e-mail: failed, customer_email_missing, no fee; the step still counts.
    await h.settings({ letterFallback: false });
    const mute = await s.customer({
      type: 'person',
      name: 'Ingen Mail',
      address: { street: 'Torvet 3', postalCode: '5000', city: 'Odense C' },
    });
    const noMail = await s.issue({ customerId: mute, paymentTermsDays: 14 });
    await h.advanceTo(addDays(noMail.dueDate, 7));
    const one = await h.history(noMail.id);
    assert.deepEqual(
      one.data.map((r) => [r.reminderNumber, r.feeOere, r.channel, r.status, r.failureCode, sentOn(r)]),
      [[1, 0, null, 'failed', 'customer_email_missing', addDays(noMail.dueDate, 7)]],
    );
    assert.deepEqual(one.meta.nextReminder, { type: 'reminder', reminderNumber: 2, date: addDays(noMail.dueDate, 14) }, 'the next number follows');
    await h.advanceTo(addDays(noMail.dueDate, 21));
    assert.deepEqual(
      (await h.history(noMail.id)).data.map((r) => [r.reminderNumber, r.feeOere, r.status, r.failureCode, sentOn(r)]),
      [
        [1, 0, 'failed', 'customer_email_missing', addDays(noMail.dueDate, 7)],
        [2, 0, 'failed', 'customer_email_missing', addDays(noMail.dueDate, 14)],
        [3, 0, 'failed', 'customer_email_missing', addDays(noMail.dueDate, 21)],
      ],
    );
    assert.equal((await s.invoice(noMail.id)).reminderFeeOere, 0);
    assert.equal(readdirSync(s.letterDir).filter((f) => f.endsWith('.pdf')).length, 3, 'no letter without the fallback');
    for (const inv of [byLetter, noAddress, noMail]) await s.pay(inv.id, (await s.invoice(inv.id)).balanceOere);
  });

  it('a credit note crediting the invoice to zero ends the plan; the fee already charged stays', async () => {
    await h.settings({});
    const inv = await s.issue({ paymentTermsDays: 14 });
    await h.advanceTo(addDays(inv.dueDate, 8));
    assert.equal((await h.history(inv.id)).data.length, 1);
    const credit = await h.req('POST', `/v1/invoices/${inv.id}/credit`, { reason: 'Fejlfaktureret' });
    assert.equal(credit.status, 201, credit.raw);
    await s.settle();
    const { data, meta } = await h.history(inv.id);
    assert.equal(meta.nextReminder, null);
    await s.advance(40);
    assert.deepEqual(rows((await h.history(inv.id)).data), rows(data), 'no reminder after the credit note');
    const after = await s.invoice(inv.id);
    assert.deepEqual([after.creditedOere, after.reminderFeeOere, after.balanceOere], [inv.grossOere, 10_000, 10_000]);
  });

  it('a 40-day clock advance in one call takes every step on its own date and mails each once', async () => {
    await h.settings({ paymentReminderEnabled: true, paymentReminderDays: 3 });
    const inv = await s.issue({ paymentTermsDays: 1 });
    const due = inv.dueDate;
    await s.advance(40);
    const { data, meta } = await h.history(inv.id);
    assert.deepEqual(rows(data), [
      ['payment_reminder', null, 0, 'email', 'sent', addDays(due, 3), addDays(due, 13)],
      ['reminder', 1, 10_000, 'email', 'sent', addDays(due, 7), addDays(due, 17)],
      ['reminder', 2, 10_000, 'email', 'sent', addDays(due, 17), addDays(due, 27)],
      ['reminder', 3, 10_000, 'email', 'sent', addDays(due, 27), addDays(due, 37)],
    ]);
    assert.equal(meta.nextReminder, null);
    // The timeline carries the same dates.
    const reminders = (await h.timeline(inv.id)).filter((t) => t.code === 'reminder');
    assert.deepEqual(reminders.map((t) => copenhagenDate(t.at)), data.map(sentOn));
    const sent = await testDb().db.sql<{ message_id: string | null; delivery: string }[]>`
      SELECT message_id, delivery FROM reminders WHERE invoice_id = ${inv.id} ORDER BY sent_on`;
    assert.equal(sent.length, 4);
    const emls = s.mails();
    for (const r of sent) {
      assert.equal(r.delivery, 'done');
      const id = r.message_id!.replace(/^<|>$/g, '');
      assert.equal(emls.filter((m) => m.includes(`Message-ID: <${id}>`)).length, 1, `one mail with ${id}`);
    }
    assert.equal((await h.eventsOf(inv.id, 'invoice.overdue')).length, 1);
  });

  it('five invoices of one customer due the same day, fees left for three: the oldest numbers get them, and the dates that follow', async () => {
    await h.settings({});
    const customerId = await s.customer({ type: 'company', name: 'Fem Fakturaer A/S', cvr: '55667788', email: 'bogholderi@fem.dk' });
    const invoices: Invoice[] = [];
    for (let i = 0; i < 5; i++) invoices.push(await s.issue({ customerId, paymentTermsDays: 14 }));
    const due = invoices[0]!.dueDate;
    assert.ok(invoices.every((i) => i.dueDate === due));
    assert.deepEqual(invoices.map((i) => i.number), [...invoices.map((i) => i.number)].sort((a, b) => a - b));
    await h.advanceTo(addDays(due, 30));
    const feeBearing = [
      ['reminder', 1, 10_000, 'email', 'sent', addDays(due, 7), addDays(due, 17)],
      ['reminder', 2, 0, 'email', 'sent', addDays(due, 17), addDays(due, 27)],
      ['reminder', 3, 0, 'email', 'sent', addDays(due, 21), addDays(due, 31)],
    ];
    const free = [
      ['reminder', 1, 0, 'email', 'sent', addDays(due, 7), addDays(due, 17)],
      ['reminder', 2, 0, 'email', 'sent', addDays(due, 14), addDays(due, 24)],
      ['reminder', 3, 0, 'email', 'sent', addDays(due, 21), addDays(due, 31)],
    ];
    const histories = await Promise.all(invoices.map(async (i) => rows((await h.history(i.id)).data)));
    assert.deepEqual(histories, [feeBearing, feeBearing, feeBearing, free, free]);
    for (const inv of invoices) await s.pay(inv.id, (await s.invoice(inv.id)).balanceOere);
  });
});

describe('scenario: dunning and limitation', function () {
  this.timeout(180_000);
  let s: Scenario;
  const h = helpers(() => s);
  /**
   * Issues an invoice with a due date in the past. Nothing hands the lifecycle (due at once) to the engine after the
   * issue commits, so the story moves the clock a day, which wakes it as the housekeeping loop would within a minute.
   */
  const issueLate = async (dueDate: string): Promise<Invoice> => {
    const customerId = await s.customer();
    const res = await h.req('POST', '/v1/invoices?issue=true', {
      customerId,
      dueDate,
      lines: [{ description: 'Rådgivning', quantity: 1, unitPriceOere: 100_000, vatRateBps: 2500 }],
    });
    assert.equal(res.status, 201, res.raw);
    await s.advance(1);
    return s.invoice(res.body.data.id);
  };

  before(async () => {
    s = await startScenario({ orgName: 'Forældelse ApS' });
  });
  after(async () => {
    await s?.close();
  });

  it('a claim issued time-barred: the engine reminds it without fees, from the day it was issued', async () => {
    const today = await s.today();
    const dueDate = addDays(today, -(3 * 365 + 40));
    assert.ok(timeBarredOn(dueDate) <= today);
    const inv = await issueLate(dueDate);
    assert.deepEqual([inv.issueDate, inv.dueDate], [today, dueDate]);
    await h.advanceTo(addDays(today, 25));
    const { data, meta } = await h.history(inv.id);
    assert.deepEqual(rows(data), [
      ['reminder', 1, 0, 'email', 'sent', today, addDays(today, 10)],
      ['reminder', 2, 0, 'email', 'sent', addDays(today, 10), addDays(today, 20)],
      ['reminder', 3, 0, 'email', 'sent', addDays(today, 20), addDays(today, 30)],
    ]);
    assert.equal(meta.nextReminder, null);
    const after = await s.invoice(inv.id);
    assert.deepEqual([after.status, after.reminderFeeOere], ['overdue', 0]);
    assert.deepEqual((await h.timeline(inv.id)).filter((t) => t.code === 'limitation_warning'), [], 'no warning of a limitation already passed');
    const collect = await h.req('POST', `/v1/invoices/${inv.id}/collect`);
    if (collect.status !== 404) assert.equal(collect.body?.error?.code, 'claim_time_barred', collect.raw);
  });

  it('limitation warnings 90 and 30 days before the claim is time-barred, each on its own date', async () => {
    const issuedOn = await s.today();
    // Due a little under 3 years ago: the reminders come first, then the warnings, then the limitation.
    const dueDate = addDays(issuedOn, -(3 * 365) + 150);
    const barred = timeBarredOn(dueDate);
    const inv = await issueLate(dueDate);
    await h.advanceTo(addDays(issuedOn, 25));
    // Not barred yet: fees, from the issue day on, 10 days apart.
    assert.deepEqual(rows((await h.history(inv.id)).data), [
      ['reminder', 1, 10_000, 'email', 'sent', issuedOn, addDays(issuedOn, 10)],
      ['reminder', 2, 10_000, 'email', 'sent', addDays(issuedOn, 10), addDays(issuedOn, 20)],
      ['reminder', 3, 10_000, 'email', 'sent', addDays(issuedOn, 20), addDays(issuedOn, 30)],
    ]);
    await h.advanceTo(addDays(barred, -91));
    assert.deepEqual((await h.timeline(inv.id)).filter((t) => t.code === 'limitation_warning'), []);
    await h.advanceTo(addDays(barred, -60));
    await h.advanceTo(addDays(barred, 5));
    const warnings = (await h.timeline(inv.id)).filter((t) => t.code === 'limitation_warning');
    assert.deepEqual(
      warnings.map((w) => [copenhagenDate(w.at), w.data]),
      [
        [addDays(barred, -90), { daysBefore: 90, timeBarredOn: barred }],
        [addDays(barred, -30), { daysBefore: 30, timeBarredOn: barred }],
      ],
    );
    assert.equal((await s.invoice(inv.id)).balanceOere > 0, true);
  });
});
