import assert from 'node:assert/strict';
import { addDays } from '../../services/shared/clock.ts';
import { call, testDb } from '../helpers/context.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { startScenario, type Scenario } from '../helpers/scenario.ts';
import { eventually, Receiver } from '../helpers/webhooks.ts';

/**
 * The reminder events on a sandbox clock (docs/reminders.md, "Events"): `reminder.sent` once per reminder delivered,
 * automatic or manual, the payment reminder included; `reminder.failed` once per reminder recorded as failed; both in
 * the invoice's block, with the reminder's figures in `data`, delivered to the endpoints that subscribe to them.
 */
describe('scenario: reminder events', function () {
  this.timeout(180_000);
  let s: Scenario;
  const receiver = new Receiver();

  before(async () => {
    s = await startScenario({ orgName: 'Rykker Hændelser ApS' });
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
    await s?.close();
  });

  const settings = async (body: Record<string, unknown>) => {
    const res = await call(s.api.app, 'PUT', '/v1/reminder-settings', { key: s.org.apiKey, body: reminderSettingsBody(body) });
    assert.equal(res.status, 200, res.raw);
  };
  interface Envelope {
    id: string;
    type: string;
    invoice?: { id: string; sekvensnummer: number };
    data: Record<string, unknown>;
    [key: string]: unknown;
  }
  /** The invoice's reminder events as the feed lists them, oldest first. */
  const reminderEvents = async (invoiceId: string): Promise<Envelope[]> => {
    const out: Envelope[] = [];
    for (const type of ['reminder.sent', 'reminder.failed']) {
      const res = await call(s.api.app, 'GET', `/v1/events?type=${type}&limit=100`, { key: s.org.apiKey });
      assert.equal(res.status, 200, res.raw);
      out.push(...(res.body.data as Envelope[]).filter((e) => e.data.invoiceId === invoiceId));
    }
    return out.sort((a, b) => a.invoice!.sekvensnummer - b.invoice!.sekvensnummer);
  };
  const historyIds = async (invoiceId: string): Promise<string[]> => {
    const res = await call(s.api.app, 'GET', `/v1/invoices/${invoiceId}/reminders`, { key: s.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return (res.body.data as { id: string }[]).map((r) => r.id);
  };

  it('the payment reminder and reminders 1..3: one reminder.sent each, in the invoice block, with the reminder figures; an endpoint subscribed receives them', async () => {
    await settings({ paymentReminderEnabled: true, paymentReminderDays: 3 });
    const endpoint = await call(s.api.app, 'POST', '/v1/webhook-endpoints', { key: s.org.apiKey, body: { url: receiver.url, eventTypes: ['reminder.sent'] } });
    assert.equal(endpoint.status, 201, endpoint.raw);
    const customerId = await s.customer();
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    const due = inv.dueDate;
    await s.advance(14 + 40);
    const ids = await historyIds(inv.id);
    assert.equal(ids.length, 4);
    const events = await reminderEvents(inv.id);
    const base = { invoiceId: inv.id, customerId, interestOere: 0, compensationOere: 0, channel: 'email' };
    assert.deepEqual(
      events.map((e) => [e.type, e.data]),
      [
        ['reminder.sent', { reminderId: ids[0], ...base, type: 'payment_reminder', reminderNumber: null, feeOere: 0, demandLetter: false, deadline: addDays(due, 13) }],
        ['reminder.sent', { reminderId: ids[1], ...base, type: 'reminder', reminderNumber: 1, feeOere: 10_000, demandLetter: false, deadline: addDays(due, 17) }],
        ['reminder.sent', { reminderId: ids[2], ...base, type: 'reminder', reminderNumber: 2, feeOere: 10_000, demandLetter: false, deadline: addDays(due, 27) }],
        ['reminder.sent', { reminderId: ids[3], ...base, type: 'reminder', reminderNumber: 3, feeOere: 10_000, demandLetter: true, deadline: addDays(due, 37) }],
      ],
    );
    // The envelope: the invoice's block (the reminder family has none of its own), numbered with the invoice's events.
    for (const e of events) {
      assert.deepEqual(Object.keys(e), ['id', 'type', 'timestamp', 'organizationId', 'invoice', 'data']);
      assert.equal(e.invoice!.id, inv.id);
    }
    const invoiceSeq = await testDb().db.sql<{ type: string; sekvensnummer: number }[]>`
      SELECT type, sekvensnummer FROM events WHERE entity_id = ${inv.id} ORDER BY sekvensnummer`;
    assert.deepEqual(invoiceSeq.map((r) => r.sekvensnummer), invoiceSeq.map((_, i) => i + 1), 'one gapless sequence per invoice');
    assert.deepEqual(
      invoiceSeq.map((r) => r.type),
      ['invoice.issued', 'invoice.overdue', 'reminder.sent', 'reminder.sent', 'reminder.sent', 'reminder.sent'],
    );
    // No personal data: ids, amounts, dates and codes only.
    assert.ok(!JSON.stringify(events).includes('kunde.dk'));

    const delivered = await eventually('the four reminder.sent deliveries', async () => {
      const bodies = receiver.received.map((r) => JSON.parse(r.body) as Envelope).filter((b) => b.data.invoiceId === inv.id);
      return bodies.length >= 4 ? bodies : undefined;
    });
    await s.settle();
    assert.deepEqual(
      delivered.map((b) => [b.type, b.id, b.data.reminderId]).sort(),
      events.map((e) => [e.type, e.id, e.data.reminderId]).sort(),
    );
    assert.ok(receiver.received.every((r) => (JSON.parse(r.body) as Envelope).type === 'reminder.sent'), 'only the subscribed type');
    await s.pay(inv.id, (await s.invoice(inv.id)).balanceOere);
    await settings({});
  });

  it('a customer without e-mail (no letter fallback) and one without an address (fallback on): reminder.failed with the code, never reminder.sent', async () => {
    await settings({ letterFallback: false });
    const mute = await s.customer({ type: 'person', name: 'Ingen Mail', address: { street: 'Torvet 3', postalCode: '5000', city: 'Odense C' } });
    const noMail = await s.issue({ customerId: mute, paymentTermsDays: 14 });
    await s.advance(14 + 7);
    const [mailId] = await historyIds(noMail.id);
    assert.deepEqual((await reminderEvents(noMail.id)).map((e) => [e.type, e.invoice, e.data]), [
      [
        'reminder.failed',
        { id: noMail.id, sekvensnummer: 3 },
        {
          reminderId: mailId, invoiceId: noMail.id, customerId: mute, type: 'reminder', reminderNumber: 1, feeOere: 0, interestOere: 0, compensationOere: 0,
          demandLetter: false, channel: null, deadline: addDays(noMail.dueDate, 17), failureCode: 'customer_email_missing',
        },
      ],
    ]);

    await settings({ letterFallback: true });
    const homeless = await s.customer({ type: 'person', name: 'Uden Adresse', address: { street: 'Vestergade 2' } });
    const noAddress = await s.issue({ customerId: homeless, paymentTermsDays: 14 });
    await s.advance(14 + 7);
    const [addressId] = await historyIds(noAddress.id);
    assert.deepEqual((await reminderEvents(noAddress.id)).map((e) => [e.type, e.data.reminderId, e.data.channel, e.data.failureCode]), [
      ['reminder.failed', addressId, null, 'customer_address_missing'],
    ]);
    for (const inv of [noMail, noAddress]) await s.pay(inv.id, (await s.invoice(inv.id)).balanceOere);
    await settings({});
  });

  it('a manual reminder yields its reminder.sent once it is mailed', async () => {
    const customerId = await s.customer();
    const inv = await s.issue({ customerId, paymentTermsDays: 14 });
    await s.advance(14 + 2);
    const res = await call(s.api.app, 'POST', `/v1/invoices/${inv.id}/reminders`, { key: s.org.apiKey, body: {} });
    assert.equal(res.status, 200, res.raw);
    await s.settle();
    const [id] = await historyIds(inv.id);
    const today = await s.today();
    const events = await eventually('the manual reminder delivered', async () => {
      const e = await reminderEvents(inv.id);
      return e.length > 0 ? e : undefined;
    });
    assert.deepEqual(events.map((e) => [e.type, e.data]), [
      [
        'reminder.sent',
        {
          reminderId: id, invoiceId: inv.id, customerId, type: 'reminder', reminderNumber: 1, feeOere: 10_000, interestOere: 0, compensationOere: 0,
          demandLetter: false, channel: 'email', deadline: addDays(today, 10),
        },
      ],
    ]);
    await s.pay(inv.id, (await s.invoice(inv.id)).balanceOere);
  });
});
