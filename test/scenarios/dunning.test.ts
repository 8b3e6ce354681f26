import assert from 'node:assert/strict';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import { call, testDb } from '../helpers/context.ts';
import { startScenario, type Invoice, type Scenario } from '../helpers/scenario.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { metricReaches, metricValue } from '../helpers/metrics.ts';

/**
 * The dunning engine on a sandbox clock, as the law reads (docs/reminders.md, "The law" and "Decisions the engine
 * takes"): each story issues invoices through the API, moves the organisation's clock, and reads the history, the fees,
 * the mails and the events the engine left. Real restate-server, PostgreSQL, Chromium and an SMTP server on loopback.
 */
describe('scenario: dunning', function () {
  this.timeout(180_000);
  let s: Scenario;

  before(async () => {
    s = await startScenario({ orgName: 'Rykker Test ApS' });
  });
  after(async () => {
    await s?.close();
  });

  interface HistoryItem {
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
  const history = async (id: string): Promise<{ data: HistoryItem[]; meta: { maxReminders: number; nextReminder: unknown } }> => {
    const res = await call(s.api.app, 'GET', `/v1/invoices/${id}/reminders`, { key: s.org.apiKey });
    assert.equal(res.status, 200, res.raw);
    return res.body;
  };
  // The business date of the instant: Copenhagen's, not UTC's (they differ for an hour or two around midnight).
  const sentOn = (h: HistoryItem) => copenhagenToday(new Date(h.sentAt));
  const settings = async (body: Record<string, unknown>) => {
    const res = await call(s.api.app, 'PUT', '/v1/reminder-settings', {
      key: s.org.apiKey,
      body: reminderSettingsBody(body),
    });
    assert.equal(res.status, 200, res.raw);
  };
  /** The mails the SMTP server took that carry a Message-ID. */
  const mailsWith = (messageId: string) => s.mails().filter((m) => m.includes(`Message-ID: <${messageId.replace(/^<|>$/g, '')}>`));

  it('default cadence: reminders on due + 7, + 17 and + 27 with the statutory fee, the third the demand letter', async () => {
    await settings({});
    const inv: Invoice = await s.issue({ paymentTermsDays: 14 });
    const due = inv.dueDate;
    const kinds = ['payment_reminder', 'reminder', 'demand_letter', 'collect'] as const;
    const steps = () => Promise.all(kinds.map((kind) => metricValue('faktura_reminder_steps_total', { kind })));
    const stepsBefore = await steps();
    await s.advance(14 + 40);
    const { data, meta } = await history(inv.id);
    assert.deepEqual(
      data.map((h) => [h.type, h.reminderNumber, h.feeOere, h.channel, h.status, h.demandLetter, sentOn(h), h.deadline, h.source]),
      [
        ['reminder', 1, 10_000, 'email', 'sent', false, addDays(due, 7), addDays(due, 17), 'automatic'],
        ['reminder', 2, 10_000, 'email', 'sent', false, addDays(due, 17), addDays(due, 27), 'automatic'],
        ['reminder', 3, 10_000, 'email', 'sent', true, addDays(due, 27), addDays(due, 37), 'automatic'],
      ],
    );
    assert.deepEqual(meta, { maxReminders: 3, nextReminder: null });
    const after = await s.invoice(inv.id);
    assert.deepEqual([after.status, after.reminderFeeOere, after.balanceOere], ['overdue', 30_000, inv.grossOere + 30_000]);
    const types = await s.eventTypes();
    assert.equal(types.filter((t) => t === 'invoice.overdue').length, 1);
    const timeline = (await call(s.api.app, 'GET', `/v1/invoices/${inv.id}/timeline`, { key: s.org.apiKey })).body.data.map((t: { code: string }) => t.code);
    assert.deepEqual(timeline.filter((c: string) => c === 'reminder' || c === 'collections_ready'), ['reminder', 'reminder', 'reminder', 'collections_ready']);
    // Each reminder was mailed once, with its PDF, under its own stable Message-ID.
    const [rows] = [await testDb().db.sql<{ message_id: string | null; delivery: string; document_sha256: Buffer | null }[]>`
      SELECT message_id, delivery, document_sha256 FROM reminders WHERE invoice_id = ${inv.id} ORDER BY sent_on`];
    assert.deepEqual(rows.map((r) => [r.delivery, r.document_sha256 !== null, /^<?reminder-[0-9a-f-]{36}@/.test(r.message_id ?? '')]), [
      ['done', true, true],
      ['done', true, true],
      ['done', true, true],
    ]);
    for (const r of rows) assert.equal(mailsWith(r.message_id!).length, 1, r.message_id!);
    // The workflows' metrics (this process's registry) count each step taken once: two reminders, the demand letter.
    await metricReaches('faktura_reminder_steps_total', { kind: 'demand_letter' }, stepsBefore[2]! + 1);
    assert.deepEqual((await steps()).map((n, i) => n - stepsBefore[i]!), [0, 2, 1, 0]);
  });

  it('a payment in full between reminders ends the plan; a partial payment does not', async () => {
    const full = await s.issue({ paymentTermsDays: 14 });
    const partial = await s.issue({ paymentTermsDays: 14 });
    await s.advance(14 + 8);
    assert.equal((await history(full.id)).data.length, 1);
    await s.pay(full.id, full.grossOere + 10_000);
    await s.pay(partial.id, 1000);
    await s.advance(40);
    assert.equal((await history(full.id)).data.length, 1, 'nothing after the payment in full');
    assert.deepEqual((await history(full.id)).meta.nextReminder, null);
    assert.equal((await history(partial.id)).data.length, 3, 'a partial payment changes nothing');
  });
});
