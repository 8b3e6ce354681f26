import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { dunningKey } from '../../contracts/workflows.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { dueWakes } from '../../services/clock/wake-index.ts';
import { copenhagenToday } from '../../services/shared/clock.ts';
import { createRestateWakeups } from '../../services/clock/wakeups.ts';
import { createEngineClient } from '../../services/shared/engine-client.ts';
import { call, createTestOrg, startTestApp, TEST_MASTER_KEY, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { header, onlyLeaf, parseMime } from '../helpers/mime.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { startWorkerProcess, within } from '../helpers/worker-process.ts';

/**
 * The dunning engine survives a killed workflows process (the issue's words: "kill the workflows process between the
 * fee's commit and the mail, and between the mail and its record: after restart the history, fees and mails are
 * exactly as without the kill").
 *
 * The workflows endpoint runs in a child process (fixtures/dunning-worker.ts) with the real activities and the SMTP
 * mailer against an SMTP server on loopback run here, which keeps every message it accepts (no deduplication, so a
 * mail sent twice shows twice). The child stops at one point of the first reminder and is killed there with SIGKILL;
 * a fresh child on the same endpoint address (same restate-server) takes over, and Restate retries the invocation
 * from its journal. The outcome is compared with a control invoice that a child without a fault dunned over the same
 * days: the same reminders on the same days, the same fees (one invoice_fees row per fee), each reminder delivered
 * under its own Message-ID, and every mail of a reminder carrying that Message-ID.
 */

interface ReceivedMail {
  to: string[];
  messageId: string;
  /** What the customer reads: the subject, the text and the attached PDF (SHA-256), to tell a repeat from another mail. */
  content: string;
}

/** A mail the SMTP sink accepted, as the comparisons read it. */
function receivedMail(raw: Buffer, to: string[]): ReceivedMail {
  const mail = parseMime(raw);
  const pdf = createHash('sha256').update(onlyLeaf(mail, 'application/pdf').body).digest('hex');
  const content = JSON.stringify([header(mail, 'subject'), onlyLeaf(mail, 'text/plain').body.toString('utf8'), pdf]);
  return { to, messageId: (header(mail, 'message-id') ?? '').replace(/^<|>$/g, ''), content };
}

type Fault = 'taken' | 'mailed' | 'recording';

interface Worker {
  child: ChildProcess;
  /** Where the child stopped (`taken`, `mailed`, `recording`) and the reminder it stopped at. */
  stopped: Promise<{ point: string; reminderId: string }>;
  kill(): Promise<void>;
}

const PAYMENT_TERMS_DAYS = 14;
/** Past due + 17: the first two reminders of the default cadence (due + 7, due + 17) are due, the third not yet. */
const ADVANCE_DAYS = PAYMENT_TERMS_DAYS + 18;

describe('dunning survives a killed workflows process', function () {
  this.timeout(60_000);
  let restate: TestRestate;
  let smtp: SmtpSink;
  let t: TestApp;
  const workers = new Set<ChildProcess>();

  before(async () => {
    // A shard's scheduler hands on every due row of its shard, whichever organisation's: rows that earlier test files
    // left due (sandbox clocks far ahead, and no engine running then) would otherwise be the first work this file's
    // faulty worker meets. The faults are about this file's invoices, so its engine starts with an empty index.
    await testDb().db.sql`DELETE FROM wake_index`;
    // The invocation is retried while no endpoint answers (between the kill and the restart): more attempts than
    // the other tests' three, and short intervals, so the fresh process is reached soon after it registers.
    restate = await startTestRestate({ RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: '200', RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '250ms' });
    smtp = await startSmtpSink();
    t = await startTestApp({ wakeups: createRestateWakeups(restate.ingressUrl), engine: createEngineClient(restate.ingressUrl, testDb().db) });
  });
  after(async () => {
    for (const child of workers) child.kill('SIGKILL');
    await t?.close();
    await smtp?.close();
    await restate?.stop();
  });

  /** Starts the workflows endpoint in a child process on `port` and waits until it is registered. */
  async function startWorker(port: number, fault?: Fault): Promise<Worker> {
    const w = await startWorkerProcess('test/workflows/fixtures/dunning-worker.ts', [process.env.TEST_DATABASE_URL!, TEST_MASTER_KEY.toString('hex'), restate.adminUrl, smtp.url, String(port)], { DUNNING_FAULT: fault ?? '', RESTATE_IDENTITY_KEYS: restate.identityKeys.join(',') }, workers);
    const stopped = w.stopped.then((s) => ({ point: s.point, reminderId: s.id }));
    stopped.catch(() => {});
    return { ...w, stopped };
  }

  let customers = 0;
  interface Issued {
    org: TestOrg;
    invoiceId: string;
    dueDate: string;
    grossOere: number;
    email: string;
  }

  /**
   * An organisation of its own (its own test clock) with one customer and one issued invoice, with default reminder
   * settings (`interest`: statutory late-payment interest and the 310 kr compensation switched on).
   */
  async function issueInvoice(opts: { interest?: boolean } = {}): Promise<Issued> {
    const org = await createTestOrg({ name: 'Rykker Test ApS' });
    if (opts.interest) {
      const put = await call(t.app, 'PUT', '/v1/reminder-settings', { key: org.apiKey, body: reminderSettingsBody({ lateInterest: 'statutory', compensation: true }) });
      assert.equal(put.status, 200, put.raw);
    }
    const email = `bogholderi-${++customers}@kunde.dk`;
    const c = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S', cvr: '87654321', email } });
    assert.equal(c.status, 201, c.raw);
    const lines = [{ description: 'Rådgivning', quantity: 1, unitPriceOere: 100_000, vatRateBps: 2500 }];
    const inv = await call(t.app, 'POST', '/v1/invoices?issue=true', { key: org.apiKey, body: { customerId: c.body.data.id, lines, paymentTermsDays: PAYMENT_TERMS_DAYS } });
    assert.equal(inv.status, 201, inv.raw);
    return { org, invoiceId: inv.body.data.id, dueDate: inv.body.data.dueDate, grossOere: inv.body.data.grossOere, email };
  }

  async function advance(org: TestOrg, days: number): Promise<void> {
    const res = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days } });
    assert.equal(res.status, 200, res.raw);
  }

  interface ReminderRow {
    id: string;
    delivery: string;
    documented: boolean;
    message_id: string | null;
    fee_oere: number;
    fee_id: string | null;
  }
  const reminderRows = (inv: Issued) =>
    testDb().db.sql<ReminderRow[]>`
      SELECT id, delivery, document_sha256 IS NOT NULL AS documented, message_id, fee_oere, fee_id
      FROM reminders WHERE invoice_id = ${inv.invoiceId} ORDER BY sent_on, id`;
  const feeRows = (inv: Issued) =>
    testDb().db.sql<{ id: string; kind: string; amount_oere: number }[]>`
      SELECT id, kind, amount_oere FROM invoice_fees WHERE invoice_id = ${inv.invoiceId} ORDER BY created_at, id`;
  const mailsTo = (inv: Issued) => smtp.received.map((raw, i) => receivedMail(raw, smtp.recipients[i]!)).filter((m) => m.to.includes(inv.email));

  /** Waits until the invoice's dunning has run: nothing due in the wake index, no reminder unfinished, no invocation open. */
  async function settled(inv: Issued): Promise<void> {
    const key = dunningKey(inv.org.organizationId, inv.invoiceId);
    const until = Date.now() + 30_000;
    for (;;) {
      const due = await dueWakes(testDb().db, inv.org.organizationId, null, 1);
      const unfinished = (await reminderRows(inv)).filter((r) => r.delivery === 'pending' || !r.documented);
      const open = await restate.query(
        `SELECT id FROM sys_invocation WHERE target_service_name = 'Dunning' AND target_service_key = '${key}' AND status <> 'completed'`,
      );
      if (due.length === 0 && unfinished.length === 0 && open.length === 0) break;
      if (Date.now() > until) throw new Error(`dunning did not settle: ${due.length} due, ${unfinished.length} unfinished, ${open.length} open invocations`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // A late duplicate would arrive now, if at all.
    await new Promise((r) => setTimeout(r, 300));
  }

  /** Everything the dunning left, with dates relative to the due date, so that two invoices can be compared. */
  async function outcome(inv: Issued) {
    const days = (date: string) => Math.round((Date.parse(date) - Date.parse(inv.dueDate)) / 86_400_000);
    const history = await call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}/reminders`, { key: inv.org.apiKey });
    assert.equal(history.status, 200, history.raw);
    const invoice = (await call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}`, { key: inv.org.apiKey })).body.data;
    const timeline = (await call(t.app, 'GET', `/v1/invoices/${inv.invoiceId}/timeline`, { key: inv.org.apiKey })).body.data as { code: string }[];
    // In the invoice's own order (sekvensnummer): ids minted by two processes need not sort as the events happened.
    const events = await testDb().db.sql<{ type: string }[]>`
      SELECT type FROM events WHERE organization_id = ${inv.org.organizationId} AND entity_id = ${inv.invoiceId} ORDER BY sekvensnummer`;
    const rows = await reminderRows(inv);
    const fees = await feeRows(inv);
    const mails = mailsTo(inv);
    return {
      history: (history.body.data as Record<string, unknown>[]).map((h) => ({
        type: h.type,
        reminderNumber: h.reminderNumber,
        feeOere: h.feeOere,
        interestOere: h.interestOere,
        compensationOere: h.compensationOere,
        channel: h.channel,
        status: h.status,
        demandLetter: h.demandLetter,
        source: h.source,
        sentOn: days(copenhagenToday(new Date(String(h.sentAt)))),
        deadline: days(String(h.deadline)),
      })),
      invoice: {
        status: invoice.status,
        reminderFeeOere: invoice.reminderFeeOere,
        balanceOere: invoice.balanceOere - inv.grossOere,
        ...(invoice.interestOere > 0 || invoice.compensationOere > 0 ? { interestOere: invoice.interestOere, compensationOere: invoice.compensationOere } : {}),
      },
      // One invoice_fees row per fee-bearing reminder, and each reminder's fee is that row.
      fees: fees.map((f) => [f.kind, f.amount_oere]),
      feesMatchReminders: rows.filter((r) => r.fee_oere > 0).map((r) => fees.find((f) => f.id === r.fee_id)?.amount_oere ?? 'no such fee row'),
      reminders: rows.map((r) => ({ delivery: r.delivery, documented: r.documented, messageId: r.message_id === `reminder-${r.id}@faktura.invalid` })),
      // The distinct Message-IDs mailed are exactly the Message-IDs recorded on the reminders, one per reminder.
      mailedIdsRecorded: JSON.stringify([...new Set(mails.map((m) => m.messageId))].sort()) === JSON.stringify(rows.map((r) => r.message_id ?? '').sort()),
      timeline: timeline.map((e) => e.code).filter((c) => c === 'reminder' || c === 'collections_ready'),
      // reminder.sent once per reminder delivered, however often its record step ran.
      events: events.map((e) => e.type).filter((type) => type === 'invoice.overdue' || type.startsWith('reminder.')),
    };
  }

  /**
   * Per reminder, in order: how many mails carry its Message-ID, and how many different contents they have (a repeat
   * is the same mail); plus the mails to the customer under any other Message-ID.
   */
  async function mailCounts(inv: Issued): Promise<{ perReminder: number[]; contents: number[]; other: number }> {
    const rows = await reminderRows(inv);
    const ids = rows.map((r) => `reminder-${r.id}@faktura.invalid`);
    const mails = mailsTo(inv);
    const of = (id: string) => mails.filter((m) => m.messageId === id);
    return {
      perReminder: ids.map((id) => of(id).length),
      contents: ids.map((id) => new Set(of(id).map((m) => m.content)).size),
      other: mails.filter((m) => !ids.includes(m.messageId)).length,
    };
  }

  /**
   * Dunning of one invoice, killed at `fault` on its first reminder and finished by a fresh process; then a control
   * invoice dunned over the same days without a fault. Returns both outcomes and the mail counts.
   */
  async function killAndRestart(fault: Fault, opts: { interest?: boolean } = {}) {
    const port = await freePort();
    const faulty = await startWorker(port, fault);
    const victim = await issueInvoice(opts);
    await advance(victim.org, ADVANCE_DAYS);
    const stopped = await within(`the worker to stop at ${fault}`, faulty.stopped, 20_000);
    assert.equal(stopped.point, fault);
    await faulty.kill();

    // What the dead process left: the first reminder committed with its fee, its delivery still pending.
    const left = await reminderRows(victim);
    assert.deepEqual(
      left.map((r) => [r.id, r.delivery, r.fee_oere]),
      [[stopped.reminderId, 'pending', 10_000]],
    );
    // The fee, and with interest on the step's interest and the compensation, committed with it.
    assert.deepEqual((await feeRows(victim)).map((f) => f.kind), opts.interest ? ['reminder', 'interest', 'compensation'] : ['reminder']);
    const mailedBeforeKill = mailsTo(victim).length;

    const fresh = await startWorker(port);
    try {
      await settled(victim);
      const control = await issueInvoice(opts);
      await advance(control.org, ADVANCE_DAYS);
      await settled(control);
      return {
        victim: await outcome(victim),
        control: await outcome(control),
        mailedBeforeKill,
        victimMails: await mailCounts(victim),
        controlMails: await mailCounts(control),
        documentedBeforeKill: left[0]!.documented,
      };
    } finally {
      await fresh.kill();
    }
  }

  /** The plan without any kill, as the control shows it: reminders 1 and 2 on due + 7 and due + 17 with the statutory fee. */
  function assertPlan(o: Awaited<ReturnType<typeof outcome>>): void {
    assert.deepEqual(
      o.history.map((h) => [h.type, h.reminderNumber, h.feeOere, h.channel, h.status, h.sentOn, h.deadline]),
      [
        ['reminder', 1, 10_000, 'email', 'sent', 7, 17],
        ['reminder', 2, 10_000, 'email', 'sent', 17, 27],
      ],
    );
    assert.deepEqual(o.invoice, { status: 'overdue', reminderFeeOere: 20_000, balanceOere: 20_000 });
    assert.deepEqual(o.fees, [['reminder', 10_000], ['reminder', 10_000]]);
    assert.deepEqual(o.feesMatchReminders, [10_000, 10_000]);
    assert.deepEqual(o.reminders, [
      { delivery: 'done', documented: true, messageId: true },
      { delivery: 'done', documented: true, messageId: true },
    ]);
    assert.equal(o.mailedIdsRecorded, true);
    assert.deepEqual(o.timeline, ['reminder', 'reminder']);
    assert.deepEqual(o.events, ['invoice.overdue', 'reminder.sent', 'reminder.sent']);
  }

  it('killed after the step that took the reminder and its fee committed, before the mail: the reminder is delivered, not taken again', async () => {
    const r = await killAndRestart('taken');
    assert.equal(r.mailedBeforeKill, 0);
    assert.equal(r.documentedBeforeKill, false);
    assertPlan(r.control);
    assert.deepEqual(r.victim, r.control);
    assert.deepEqual(r.controlMails, { perReminder: [1, 1], contents: [1, 1], other: 0 });
    assert.deepEqual(r.victimMails, { perReminder: [1, 1], contents: [1, 1], other: 0 });
  });

  it('with interest on, killed between the step\'s commit and its delivery: the interest and the compensation are posted once', async () => {
    const r = await killAndRestart('taken', { interest: true });
    assert.equal(r.mailedBeforeKill, 0);
    assert.deepEqual(r.victim, r.control);
    // Reminder 1: its fee, its interest piece and the compensation; reminder 2: its fee and its interest piece.
    assert.deepEqual(r.control.fees.map(([kind]) => kind), ['reminder', 'interest', 'compensation', 'reminder', 'interest']);
    assert.ok(r.control.history.every((h) => Number(h.interestOere) > 0), JSON.stringify(r.control.history));
    assert.deepEqual(r.control.history.map((h) => h.compensationOere), [31_000, 0]);
    assert.deepEqual(r.victimMails, { perReminder: [1, 1], contents: [1, 1], other: 0 });
  });

  it('killed after the mail server accepted the mail, before the delivery step was journaled: the same mail again, under the same Message-ID', async () => {
    const r = await killAndRestart('mailed');
    assert.equal(r.mailedBeforeKill, 1);
    assertPlan(r.control);
    assert.deepEqual(r.victim, r.control);
    assert.deepEqual(r.controlMails, { perReminder: [1, 1], contents: [1, 1], other: 0 });
    // At-least-once: the delivery step ran again and sent the same message; never a second, different one.
    assert.deepEqual(r.victimMails, { perReminder: [2, 1], contents: [1, 1], other: 0 });
  });

  it('killed after the delivery step was journaled, before its record committed: recorded from the journal, not mailed again', async () => {
    const r = await killAndRestart('recording');
    assert.equal(r.mailedBeforeKill, 1);
    assertPlan(r.control);
    assert.deepEqual(r.victim, r.control);
    assert.deepEqual(r.controlMails, { perReminder: [1, 1], contents: [1, 1], other: 0 });
    assert.deepEqual(r.victimMails, { perReminder: [1, 1], contents: [1, 1], other: 0 });
  });
});
