import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { freePort } from '../../deploy/local/ports.ts';
import { dueWakes } from '../../services/clock/wake-index.ts';
import { createRestateWakeups } from '../../services/clock/wakeups.ts';
import { createRestateReceiptDispatch } from '../../services/payments/receipt-dispatch.ts';
import { addDays, copenhagenToday } from '../../services/shared/clock.ts';
import { createEngineClient } from '../../services/shared/engine-client.ts';
import { call, createTestOrg, startTestApp, TEST_MASTER_KEY, testDb, type ApiResponse, type TestApp, type TestOrg } from '../helpers/context.ts';
import { header, onlyLeaf, parseMime } from '../helpers/mime.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { startWorkerProcess, within, type WorkerProcess } from '../helpers/worker-process.ts';

/**
 * The same claims give the same letters, also when the engine crashes on the way (docs/reminders.md, "One customer's
 * steps in a fixed order"). One seeded workload (five company customers, invoices in batches whose due dates
 * coincide, partial payments, principals paid with the fees left owing, payments in full, credit notes, clock advances
 * through some 75 business days; statutory interest and the compensation on) is run twice on the real engine, each
 * time in a fresh sandbox organisation whose test clock is first set to the same instant, so that both runs have the
 * same business dates:
 *
 * - undisturbed;
 * - with the workflows process (a child, fixtures/dunning-worker.ts) SIGKILLed twice and restate-server SIGKILLed
 *   twice, each time in the middle of a clock advance that takes many steps: the process is stopped at a reminder of
 *   the advance (after its step committed, or before its delivery is recorded) while the advance's other invocations
 *   run on, and killed there, or restate-server is, or both; each is restarted on the same ports (restate-server on
 *   its own data) and the engine catches up.
 *
 * Then, per invoice (by its index in the workload: ids differ), everything the dunning left must be identical: the
 * reminder history (dates, fees, interest, compensation, demand letters, deadlines, statuses), the invoice_fees rows
 * (kind, amount, interest days and rate, the reminder that charged it), the interest postings, the timeline, the
 * invoice's amounts and status, its events, and the mails (subject and text). The undisturbed run mails each reminder
 * once. With the kills each reminder is mailed too; a mail that the mail server had taken when a kill came, before the
 * engine journaled it, is sent again as the same mail under the same Message-ID (at-least-once, docs/reminders.md,
 * "Documents and delivery"), so a repeat is allowed there and nowhere else.
 */

/** The seed of the workload: change it and the scenario's own checks (`covers`) say whether it still tests what it should. */
const SEED = 1;
/** Both runs start here (a Monday, 10:00 in Copenhagen), so that their business dates are the same; the run crosses 1 July (two interest half-years). */
const START = '2031-05-19T10:00:00+02:00';
const LAST_DAY = 75;
const INVOICES = 20;

/** A small deterministic PRNG (mulberry32): the same seed gives the same workload on every machine. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface PlannedInvoice {
  customer: number;
  issueDay: number;
  paymentTermsDays: number;
  lines: { description: string; quantity: number; unitPriceOere: number; vatRateBps: number }[];
}
/** `partial`: a share of the gross; `principal`: what is left of the principal (the fees stay owed); `full`: the balance with the interest accrued. */
type PaymentKind = 'partial' | 'principal' | 'full';
interface Workload {
  customers: { name: string; withEmail: boolean }[];
  invoices: PlannedInvoice[];
  payments: { invoice: number; day: number; kind: PaymentKind; share: number }[];
  credits: { invoice: number; day: number }[];
  /** The days (after START) the clock stops on, ascending: every event's day and some between. */
  stops: number[];
}

function workload(seed: number): Workload {
  const rnd = prng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const customers = [
    { name: 'Tømrer Jensen ApS', withEmail: true },
    { name: 'Blomsterhuset I/S', withEmail: true },
    { name: 'Nordvest Logistik A/S', withEmail: true },
    { name: 'Café Kanten ApS', withEmail: true },
    // Without an e-mail address: its reminders are taken without a channel (failed, no fee, no mail).
    { name: 'Gammel Adresse ApS', withEmail: false },
  ];
  const invoices: PlannedInvoice[] = [];
  while (invoices.length < INVOICES) {
    // Invoices come in batches: one customer, one issue day, one payment term, so that due dates coincide. Few issue
    // days and terms, and most batches for the first customers: their arrears overlap too.
    const batch = { customer: pick([0, 0, 0, 1, 1, 2, 2, 3, 4]), issueDay: pick([0, 0, 6, 13, 20, 27, 34, 41]), paymentTermsDays: pick([8, 14, 14, 21, 30]) };
    for (let n = pick([1, 1, 2, 3, 4]); n > 0 && invoices.length < INVOICES; n--) {
      const i = invoices.length;
      const lines = Array.from({ length: int(1, 3) }, (_, l) => ({ description: `Ydelse ${i + 1}.${l + 1}`, quantity: int(1, 4), unitPriceOere: int(20, 400) * 1_000, vatRateBps: 2500 }));
      invoices.push({ ...batch, lines });
    }
  }
  const payments: Workload['payments'] = [];
  const credits: Workload['credits'] = [];
  const inRun = (day: number) => Math.min(Math.max(day, 1), LAST_DAY - 1);
  invoices.forEach((inv, i) => {
    const due = inv.issueDay + inv.paymentTermsDays;
    const roll = rnd();
    if (roll < 0.2) {
      payments.push({ invoice: i, day: inRun(due + int(-2, 15)), kind: 'partial', share: int(15, 60) / 100 });
      if (rnd() < 0.5) payments.push({ invoice: i, day: inRun(due + int(20, 40)), kind: 'full', share: 1 });
    } else if (roll < 0.35) {
      payments.push({ invoice: i, day: inRun(due + int(8, 30)), kind: 'principal', share: 1 });
    } else if (roll < 0.6) {
      payments.push({ invoice: i, day: inRun(due + int(-4, 35)), kind: 'full', share: 1 });
    } else if (roll < 0.68 && credits.length < 2) {
      credits.push({ invoice: i, day: inRun(due + int(5, 20)) });
    }
  });
  // A payment dated before its invoice is issued would be a payment of another claim: not on this timeline.
  for (const p of payments) p.day = Math.max(p.day, invoices[p.invoice]!.issueDay);
  for (const c of credits) c.day = Math.max(c.day, invoices[c.invoice]!.issueDay + 1);
  const stops = new Set<number>([...invoices.map((i) => i.issueDay), ...payments.map((p) => p.day), ...credits.map((c) => c.day), LAST_DAY]);
  for (let day = 0; day < LAST_DAY; day += int(1, 7)) stops.add(day);
  return { customers, invoices, payments, credits, stops: [...stops].sort((a, b) => a - b) };
}

/** A kill of run 2: in the clock advance to `day`, stop the workflows process at `point` of a reminder of that advance, then kill `kill`. */
interface Fault {
  day: number;
  /** The first business date of that advance: the process passes every reminder dated before it. */
  from: string;
  point: 'taken' | 'recording';
  kill: 'worker' | 'worker+restate' | 'restate';
}

interface ReceivedMail {
  to: string[];
  messageId: string;
  subject: string;
  /** The text part without what differs between two organisations' invoices (the payment code, links). */
  text: string;
  /** Subject, text and PDF: what tells a repeat from another mail within one run. */
  content: string;
}

function receivedMail(raw: Buffer, to: string[]): ReceivedMail {
  const mail = parseMime(raw);
  const pdf = createHash('sha256').update(onlyLeaf(mail, 'application/pdf').body).digest('hex');
  const text = onlyLeaf(mail, 'text/plain').body.toString('utf8');
  const subject = header(mail, 'subject') ?? '';
  return {
    to,
    messageId: (header(mail, 'message-id') ?? '').replace(/^<|>$/g, ''),
    subject,
    text: text
      .split('\n')
      .filter((l) => !/^(Betalingskode|Betal online|Betal med FI-kort)|https?:\/\//.test(l.trim()))
      .join('\n'),
    content: JSON.stringify([subject, text, pdf]),
  };
}

describe('dunning replay: a seeded scenario gives the same letters with and without SIGKILLs of the engine', function () {
  this.timeout(300_000);
  let restate: TestRestate;
  let smtp: SmtpSink;
  let t: TestApp;
  let port: number;
  const workers = new Set<ChildProcess>();
  const db = () => testDb().db;

  before(async () => {
    // A shard's scheduler hands on every due row of its shard, whichever organisation's: rows that earlier test files
    // left due would otherwise be delivered by this file's workers. The engine starts with an empty index.
    await db().sql`DELETE FROM wake_index`;
    // Invocations are retried while no endpoint answers (between a kill and the restart): many attempts, at short
    // intervals, so that the fresh process is reached soon after it registers.
    restate = await startTestRestate({ RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS: '400', RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL: '250ms' });
    smtp = await startSmtpSink();
    // As the API runs in production: wakes after a clock advance, and each payment's receipt handed to the engine.
    t = await startTestApp({
      wakeups: createRestateWakeups(restate.ingressUrl),
      engine: createEngineClient(restate.ingressUrl, db()),
      receiptDispatch: createRestateReceiptDispatch(restate.ingressUrl, db()),
    });
    port = await freePort();
  });
  after(async () => {
    for (const child of workers) child.kill('SIGKILL');
    await t?.close();
    await smtp?.close();
    await restate?.stop();
  });

  /** The workflows endpoint in a child process on the file's one port, registered; with a fault, it stops there once. */
  const startWorker = (fault?: Fault): Promise<WorkerProcess> =>
    startWorkerProcess(
      'test/workflows/fixtures/dunning-worker.ts',
      [process.env.TEST_DATABASE_URL!, TEST_MASTER_KEY.toString('hex'), restate.adminUrl, smtp.url, String(port)],
      { DUNNING_FAULT: fault?.point ?? '', DUNNING_FAULT_FROM: fault?.from ?? '', RESTATE_IDENTITY_KEYS: restate.identityKeys.join(',') },
      workers,
    );

  const ok = (res: ApiResponse, status: number, what: string): ApiResponse => {
    assert.equal(res.status, status, `${what}: ${res.raw}`);
    return res;
  };

  /** The organisation's reminders taken and not yet documented or delivered. */
  async function unfinishedReminders(org: TestOrg): Promise<number> {
    const [row] = await db().sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM reminders
      WHERE organization_id = ${org.organizationId} AND (delivery = 'pending' OR document_sha256 IS NULL)`;
    return row!.n;
  }

  /**
   * Waits until the organisation's dunning has run: nothing of it due in the wake index (claimed or not), no reminder
   * without its document or with its delivery pending, no invocation of its Dunning objects open in Restate.
   */
  async function settled(org: TestOrg, timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const due = await dueWakes(db(), org.organizationId, null, 10);
      const unfinished = await unfinishedReminders(org);
      // Right after a restart the server may answer a query before every partition's leader is known again: asked
      // again on the next round.
      const open = await restate
        .query(`SELECT id FROM sys_invocation WHERE target_service_name = 'Dunning' AND target_service_key LIKE '${org.organizationId}:%' AND status <> 'completed'`)
        .catch((err: Error) => [err.message]);
      if (due.length === 0 && unfinished === 0 && open.length === 0) return;
      if (Date.now() > until) throw new Error(`dunning did not settle: due ${JSON.stringify(due)}, ${unfinished} reminders unfinished, open ${JSON.stringify(open)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  interface Run {
    org: TestOrg;
    invoiceIds: string[];
    emails: string[];
    /** Per clock advance: the business today after it. */
    todays: string[];
    /** Per kill: its fault, and how many of the organisation's reminders were left unfinished by it (at least the one stopped at). */
    kills: { fault: Fault; unfinished: number }[];
  }

  /**
   * Runs the workload in a fresh organisation; with `faults`, kills as they say. The workers are started here and
   * killed at the end (all work settled: that last kill is not a fault).
   */
  async function run(w: Workload, tag: string, faults: Fault[] = []): Promise<Run> {
    const kills: Run['kills'] = [];
    const pending = [...faults].sort((a, b) => a.day - b.day);
    let worker = await startWorker(pending[0]);
    const org = await createTestOrg({ name: 'Gentagelse ApS' });
    const req = (method: string, url: string, body?: unknown) => call(t.app, method, url, { key: org.apiKey, ...(body !== undefined ? { body } : {}) });
    ok(await req('PUT', '/v1/reminder-settings', reminderSettingsBody({ paymentReminderEnabled: true, paymentReminderDays: 3, lateInterest: 'statutory', compensation: true })), 200, 'reminder settings');
    ok(await req('POST', '/v1/test-clock/advance', { to: START }), 200, 'set the clock');
    const start = copenhagenToday(new Date(START));
    const emails = w.customers.map((_, i) => `bogholderi-${i}@${tag}.kunde.dk`);
    const customerIds: string[] = [];
    for (const [i, c] of w.customers.entries()) {
      const body = { type: 'company', name: c.name, cvr: String(30_000_000 + i), ...(c.withEmail ? { email: emails[i] } : {}) };
      customerIds.push(ok(await req('POST', '/v1/customers', body), 201, 'create a customer').body.data.id as string);
    }
    const invoiceIds: string[] = [];
    const todays: string[] = [];
    let day = 0;
    for (const stop of w.stops) {
      if (stop > day) {
        const res = ok(await req('POST', '/v1/test-clock/advance', { days: stop - day }), 200, 'advance the clock');
        day = stop;
        todays.push(res.body.data.today as string);
        assert.equal(res.body.data.today, addDays(start, day));
        const fault = pending[0]?.day === day ? pending.shift() : undefined;
        if (fault) {
          // The process stops at a reminder of this advance while the advance's other steps run on; then the kill.
          const stopped = await within(`the worker to stop at ${fault.point} on day ${day}`, worker.stopped, 60_000);
          assert.equal(stopped.point, fault.point);
          if (fault.kill !== 'worker') await restate.kill();
          if (fault.kill !== 'restate') await worker.kill();
          kills.push({ fault, unfinished: await unfinishedReminders(org) });
          if (fault.kill !== 'worker') await restate.restart();
          // The next fault's process takes over (or a plain one); after a restate-only kill the stopped process stays.
          if (fault.kill !== 'restate') worker = await startWorker(pending[0]);
        }
        await settled(org, fault ? 90_000 : 30_000);
      }
      for (const [i, inv] of w.invoices.entries()) {
        if (inv.issueDay !== day) continue;
        const body = { customerId: customerIds[inv.customer], lines: inv.lines, paymentTermsDays: inv.paymentTermsDays };
        invoiceIds[i] = ok(await req('POST', '/v1/invoices?issue=true', body), 201, 'issue').body.data.id as string;
      }
      for (const p of w.payments.filter((x) => x.day === day)) {
        const id = invoiceIds[p.invoice]!;
        const inv = ok(await req('GET', `/v1/invoices/${id}`), 200, 'read').body.data;
        const principal = inv.grossOere - inv.paidOere - inv.creditedOere;
        const amountOere = p.kind === 'partial' ? Math.round(inv.grossOere * p.share) : p.kind === 'principal' ? principal : inv.balanceOere + (inv.interestAccruedOere ?? 0);
        if (amountOere <= 0) continue;
        ok(await req('POST', `/v1/invoices/${id}/payments`, { amountOere, paymentDate: addDays(start, day) }), 201, `pay ${p.kind}`);
      }
      for (const c of w.credits.filter((x) => x.day === day)) {
        ok(await req('POST', `/v1/invoices/${invoiceIds[c.invoice]!}/credit`, { reason: 'Fejl i leverancen' }), 201, 'credit');
      }
      // What the day's events hand to the engine (receipts) runs beside the next advance's steps: they do not meet.
    }
    assert.deepEqual(pending, [], 'every fault was met');
    await settled(org, 30_000);
    // A late duplicate would arrive now, if at all.
    await new Promise((r) => setTimeout(r, 300));
    await worker.kill();
    return { org, invoiceIds, emails, todays, kills };
  }

  /** Everything the dunning left on each invoice, by index, with dates as business dates. */
  async function outcome(r: Run) {
    const mails = smtp.received.map((raw, i) => receivedMail(raw, smtp.recipients[i]!)).filter((m) => m.to.some((to) => r.emails.includes(to)));
    const perInvoice = [];
    for (const id of r.invoiceIds) {
      const get = async (url: string) => ok(await call(t.app, 'GET', url, { key: r.org.apiKey }), 200, url).body;
      const history = await get(`/v1/invoices/${id}/reminders`);
      const invoice = (await get(`/v1/invoices/${id}`)).data;
      const timeline = (await get(`/v1/invoices/${id}/timeline?limit=200`)).data as { code: string; data: Record<string, unknown> }[];
      const rows = await db().sql<{ id: string; sent_on: string; type: string; reminder_number: number | null; delivery: string; documented: boolean; message_id: string | null }[]>`
        SELECT id, sent_on::text AS sent_on, type, reminder_number, delivery, document_sha256 IS NOT NULL AS documented, message_id
        FROM reminders WHERE invoice_id = ${id} ORDER BY sent_on, id`;
      const reminderName = new Map(rows.map((x) => [x.id, `${x.type}#${x.reminder_number ?? 0}@${x.sent_on}`]));
      const fees = await db().sql<{ kind: string; amount_oere: string; interest_from: string | null; interest_to: string | null; rate_bp: number | null; rate_from: string | null; reminder_id: string | null }[]>`
        SELECT kind, amount_oere::text, interest_from::text, interest_to::text, rate_bp, rate_from::text, reminder_id FROM invoice_fees WHERE invoice_id = ${id}`;
      const events = await db().sql<{ type: string }[]>`
        SELECT type FROM events WHERE organization_id = ${r.org.organizationId} AND entity_id = ${id} ORDER BY sekvensnummer`;
      perInvoice.push({
        number: invoice.number,
        dueDate: invoice.dueDate,
        history: (history.data as Record<string, unknown>[]).map((h) => ({
          type: h.type,
          reminderNumber: h.reminderNumber,
          sentOn: copenhagenToday(new Date(String(h.sentAt))),
          deadline: h.deadline,
          feeOere: h.feeOere,
          interestOere: h.interestOere,
          compensationOere: h.compensationOere,
          demandLetter: h.demandLetter,
          channel: h.channel,
          status: h.status,
          failureCode: h.failureCode,
          source: h.source,
        })),
        nextReminder: history.meta.nextReminder,
        fees: fees
          .map((f) => [f.kind, Number(f.amount_oere), f.interest_from, f.interest_to, f.rate_bp, f.rate_from, f.reminder_id === null ? null : (reminderName.get(f.reminder_id) ?? 'another invoice')])
          .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
        interestPosted: timeline.filter((e) => e.code === 'interest_posted').map((e) => e.data),
        timeline: timeline.map((e) => e.code),
        invoice: {
          status: invoice.status,
          grossOere: invoice.grossOere,
          paidOere: invoice.paidOere,
          creditedOere: invoice.creditedOere,
          reminderFeeOere: invoice.reminderFeeOere,
          interestOere: invoice.interestOere,
          compensationOere: invoice.compensationOere,
          balanceOere: invoice.balanceOere,
        },
        events: events.map((e) => e.type),
        // Every reminder documented and its delivery finished.
        deliveries: rows.map((x) => [x.delivery, x.documented, x.message_id === null ? null : x.message_id === `reminder-${x.id}@faktura.invalid`]),
        // Per reminder: what its mails say (a repeat is the same mail: one distinct content) ...
        mails: rows.map((x) => {
          const own = mails.filter((m) => m.messageId === `reminder-${x.id}@faktura.invalid`);
          return { subjects: [...new Set(own.map((m) => m.subject))], texts: [...new Set(own.map((m) => m.text))], contents: new Set(own.map((m) => m.content)).size };
        }),
        // ... and how many were sent, with its date.
        mailCounts: rows.map((x) => ({ sentOn: x.sent_on, n: mails.filter((m) => m.messageId === `reminder-${x.id}@faktura.invalid`).length })),
      });
    }
    const reminderIds = new Set((await db().sql<{ id: string }[]>`SELECT id FROM reminders WHERE organization_id = ${r.org.organizationId}`).map((x) => `reminder-${x.id}@faktura.invalid`));
    return { perInvoice, otherMails: mails.filter((m) => !reminderIds.has(m.messageId)).map((m) => m.subject).sort(), mails };
  }

  /**
   * The kills of run 2, aimed from run 1 (the two must agree, so its dates are run 2's): the three clock advances that
   * take the most reminder steps, in date order. The first stops the workflows process after a step committed and kills
   * it; the second stops it before a delivery is recorded and kills restate-server and the process; the third stops it
   * after a step committed and kills only restate-server.
   */
  function faultsFrom(quiet: Run, sentOn: string[], start: string): Fault[] {
    const advances = quiet.todays.map((today, k) => {
      const from = addDays(k === 0 ? start : quiet.todays[k - 1]!, 1);
      return { day: Math.round((Date.parse(today) - Date.parse(start)) / 86_400_000), from, steps: sentOn.filter((d) => d >= from && d <= today).length };
    });
    const busiest = [...advances].sort((a, b) => b.steps - a.steps || a.day - b.day).slice(0, 3).sort((a, b) => a.day - b.day);
    assert.ok(busiest.every((a) => a.steps >= 4), `advances with enough steps to kill in: ${JSON.stringify(busiest)}`);
    const kinds: Pick<Fault, 'point' | 'kill'>[] = [
      { point: 'taken', kill: 'worker' },
      { point: 'recording', kill: 'worker+restate' },
      { point: 'taken', kill: 'restate' },
    ];
    return busiest.map((a, i) => ({ day: a.day, from: a.from, ...kinds[i]! }));
  }

  it('the undisturbed run and the run with the workflows process and restate-server SIGKILLed mid-run leave the same reminders, fees, interest, dates and mails', async () => {
    const w = workload(SEED);
    const start = copenhagenToday(new Date(START));
    const quiet = await run(w, 'quiet');
    const a = await outcome(quiet);

    // What the scenario is meant to exercise, so that a change of seed that loses it shows.
    const dueDays = w.invoices.map((inv) => `${inv.customer}:${inv.issueDay + inv.paymentTermsDays}`);
    assert.ok(Math.max(...dueDays.map((d) => dueDays.filter((x) => x === d).length)) >= 3, 'three invoices of one customer due the same day');
    const steps = a.perInvoice.flatMap((p) => p.history);
    assert.ok(steps.some((h) => h.type === 'reminder' && h.feeOere === 0 && h.status === 'sent'), 'a numbered reminder left without a fee by the caps');
    assert.ok(steps.filter((h) => Number(h.compensationOere) > 0).length >= 3, 'compensation charged in several arrears');
    assert.ok(steps.some((h) => h.demandLetter) && steps.some((h) => h.status === 'failed'), 'a demand letter, and a reminder without a channel');
    const fees = a.perInvoice.flatMap((p) => p.fees);
    assert.ok(fees.some((f) => f[0] === 'interest' && f[6] === null), 'interest posted by a settlement');
    assert.ok(fees.some((f) => f[0] === 'interest' && String(f[2]) < '2031-07-01') && fees.some((f) => f[0] === 'interest' && String(f[2]) >= '2031-07-01'), 'interest in two half-years');
    assert.ok(w.credits.length > 0 && w.payments.some((p) => p.kind === 'partial') && w.payments.some((p) => p.kind === 'principal'), 'credit notes, partial payments, principal paid with fees left');
    // Undisturbed: exactly one mail per reminder with a channel, none for one without.
    assert.deepEqual(
      a.perInvoice.map((p) => p.mailCounts.map((c) => c.n)),
      a.perInvoice.map((p) => p.history.map((h) => (h.channel === null ? 0 : 1))),
    );

    const faults = faultsFrom(quiet, steps.map((h) => h.sentOn), start);
    const killed = await run(w, 'killed', faults);
    const b = await outcome(killed);
    // Every kill came in the middle of work: the reminder the process stopped at (at least) was left unfinished.
    assert.deepEqual(
      killed.kills.map((k) => [k.fault.kill, k.unfinished > 0]),
      [['worker', true], ['worker+restate', true], ['restate', true]],
    );

    for (const [i, p] of a.perInvoice.entries()) {
      const q = b.perInvoice[i]!;
      const { mailCounts: _quietCounts, ...quietInvoice } = p;
      const { mailCounts: killedCounts, ...killedInvoice } = q;
      assert.deepEqual(killedInvoice, quietInvoice, `invoice ${i} (number ${p.number})`);
      // Every reminder mailed as in the undisturbed run. More than once only when a kill caught its delivery in flight
      // (the mail server had taken it, the engine had not journaled that yet): in an advance with a kill, and the same
      // mail (one content, compared above).
      assert.deepEqual(
        killedCounts.map((c) => Math.min(c.n, 1)),
        p.mailCounts.map((c) => c.n),
        `invoice ${i}: every reminder mailed`,
      );
      for (const c of killedCounts.filter((c) => c.n > 1)) {
        assert.ok(faults.some((f) => c.sentOn >= f.from && c.sentOn <= addDays(start, f.day)), `invoice ${i}: a reminder of ${c.sentOn} mailed ${c.n} times outside an advance with a kill`);
      }
    }
    // The receipts of the payments, each mailed.
    assert.deepEqual([...new Set(b.otherMails)], [...new Set(a.otherMails)]);
  });
});
