import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../deploy/local/ports.ts';
import { dueWakes } from '../../services/clock/wake-index.ts';
import { createRestateWakeups } from '../../services/clock/wakeups.ts';
import { createEngineClient } from '../../services/shared/engine-client.ts';
import { addDays } from '../../services/subscriptions/period-math.ts';
import { call, createTestOrg, startTestApp, TEST_MASTER_KEY, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { header, parseMime } from '../helpers/mime.ts';
import { wakeDueWork, startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { startWorkerProcess, within } from '../helpers/worker-process.ts';

/**
 * A subscription's schedule survives a killed workflows process (docs/api-conventions.md, "Subscriptions", Exactly one
 * invoice per period: a crash between issue and receipt never yields two invoices for one period, and none is skipped).
 *
 * The workflows endpoint runs in a child process (fixtures/subscription-worker.ts) with the real activities and the
 * SMTP mailer against an SMTP server on loopback run here, which keeps every message it accepts. A weekly
 * subscription with autoSend has three periods due after one clock advance; the child stops at one point of the
 * first period and is killed there with SIGKILL; a fresh child on the same endpoint address (same restate-server)
 * takes over, Restate retries the schedule's invocation from its journal, and what the dead process left in the
 * wake index is handed on as the housekeeping loop would. Then: exactly one invoice per (subscription,
 * periodStart), each issued on its own start date and mailed once, the number series without a gap, and the
 * subscription's next period after the last one.
 */

type Fault = 'reserved' | 'issued' | 'next';

interface Worker {
  stopped: Promise<{ point: string; invoiceId: string }>;
  kill(): Promise<void>;
}

/** Periods due after the advance: the start is tomorrow, the clock moves 15 days, so weeks 0, 1 and 2 have begun. */
const ADVANCE_DAYS = 15;
const PERIODS = 3;

describe('a subscription schedule survives a killed workflows process', function () {
  this.timeout(90_000);
  let restate: TestRestate;
  let smtp: SmtpSink;
  let t: TestApp;
  const workers = new Set<ChildProcess>();

  before(async () => {
    // A shard's scheduler hands on every due row of its shard, whichever organisation's: rows that earlier test files
    // left due (sandbox clocks far ahead, and no engine running then) would otherwise be the first work this file's
    // faulty worker meets. The faults are about this file's invoices, so its engine starts with an empty index.
    await testDb().db.sql`DELETE FROM wake_index`;
    // The invocation is retried while no endpoint answers (between the kill and the restart).
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

  /** The Message-ID of each mail the SMTP sink accepted, in order. */
  const messageIds = () => smtp.received.map((raw) => (header(parseMime(raw), 'message-id') ?? '').replace(/^<|>$/g, ''));

  async function startWorker(port: number, fault?: Fault): Promise<Worker> {
    const w = await startWorkerProcess('test/workflows/fixtures/subscription-worker.ts', [process.env.TEST_DATABASE_URL!, TEST_MASTER_KEY.toString('hex'), restate.adminUrl, smtp.url, String(port)], { SUBSCRIPTION_FAULT: fault ?? '', RESTATE_IDENTITY_KEYS: restate.identityKeys.join(',') }, workers);
    const stopped = w.stopped.then((s) => ({ point: s.point, invoiceId: s.id }));
    stopped.catch(() => {});
    return { ...w, stopped };
  }

  interface Story {
    org: TestOrg;
    subscriptionId: string;
    start: string;
  }

  /** An organisation of its own (its own test clock and number series) with a weekly autoSend subscription from tomorrow. */
  async function subscribe(): Promise<Story> {
    const org = await createTestOrg({ name: 'Abonnement Test ApS' });
    const c = await call(t.app, 'POST', '/v1/customers', {
      key: org.apiKey,
      body: { type: 'company', name: 'Kunde A/S', cvr: '87654321', email: 'bogholderi@kunde.dk' },
    });
    assert.equal(c.status, 201, c.raw);
    const today = (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today as string;
    const start = addDays(today, 1);
    const sub = await call(t.app, 'POST', '/v1/subscriptions', {
      key: org.apiKey,
      body: {
        customerId: c.body.data.id,
        name: 'Hosting',
        interval: { unit: 'week', count: 1 },
        startDate: start,
        dueDays: 30,
        autoSend: true,
        lines: [{ description: 'Server', quantity: 1, unitPriceOere: 10_000 }],
      },
    });
    assert.equal(sub.status, 201, sub.raw);
    return { org, subscriptionId: sub.body.data.id, start };
  }

  async function advance(org: TestOrg, days: number): Promise<void> {
    const res = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days } });
    assert.equal(res.status, 200, res.raw);
  }

  interface InvoiceRow {
    id: string;
    status: string;
    number: string | null;
    period_start: string;
    issue_date: string | null;
  }
  const invoiceRows = (s: Story) =>
    testDb().db.sql<InvoiceRow[]>`
      SELECT id, status, number::text AS number, period_start::text AS period_start, issue_date::text AS issue_date
      FROM invoices WHERE organization_id = ${s.org.organizationId} AND subscription_id = ${s.subscriptionId} ORDER BY period_start, id`;

  /**
   * Waits until the story's durable work has run: every period invoice issued, nothing due in the wake index, no
   * invocation of the services involved still open. What stays due is handed on as the housekeeping loop would.
   */
  async function settled(s: Story): Promise<void> {
    const until = Date.now() + 40_000;
    let handedAt = Date.now();
    for (;;) {
      const due = await dueWakes(testDb().db, s.org.organizationId, null, 100);
      const rows = await invoiceRows(s);
      const open = await restate.query(
        `SELECT id FROM sys_invocation WHERE target_service_name IN ('SubscriptionSchedule', 'InvoiceIssue', 'InvoiceMail', 'BusinessClock') AND status <> 'completed'`,
      );
      const issued = rows.length >= PERIODS && rows.every((r) => r.status === 'issued');
      if (issued && due.length === 0 && open.length === 0) break;
      if (Date.now() > until) {
        throw new Error(`the subscription did not settle: ${JSON.stringify(rows)}, ${JSON.stringify(due)} due, ${open.length} open invocations`);
      }
      // The due-work pass, without waiting out its minute: rows due for a second with nothing running on them.
      if (due.length > 0 && open.length === 0 && Date.now() - handedAt > 1_000) {
        await wakeDueWork(testDb().db, restate.ingressUrl, s.org.organizationId);
        handedAt = Date.now();
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    // A late duplicate would arrive now, if at all.
    await new Promise((r) => setTimeout(r, 300));
  }

  /** Everything the schedule left, as the same story without a kill would leave it. */
  async function assertOnePerPeriod(s: Story): Promise<void> {
    const starts = Array.from({ length: PERIODS }, (_, k) => addDays(s.start, 7 * k));
    const rows = await invoiceRows(s);
    // Exactly one invoice per (subscription, periodStart), each issued on its own start date.
    const perPeriod = new Map<string, number>();
    for (const r of rows) perPeriod.set(r.period_start, (perPeriod.get(r.period_start) ?? 0) + 1);
    assert.deepEqual([...perPeriod], starts.map((d) => [d, 1]));
    assert.deepEqual(rows.map((r) => [r.period_start, r.status, r.issue_date]), starts.map((d) => [d, 'issued', d]));
    // The organisation's number series (only these invoices) has no gap, and the numbers follow the periods.
    const numbers = (
      await testDb().db.sql<{ n: string }[]>`
        SELECT number::text AS n FROM invoices WHERE organization_id = ${s.org.organizationId} AND number IS NOT NULL ORDER BY number`
    ).map((r) => Number(r.n));
    assert.deepEqual(numbers, Array.from({ length: PERIODS }, (_, k) => numbers[0]! + k));
    assert.equal(numbers[0], 1);
    assert.deepEqual(rows.map((r) => Number(r.number)), numbers);
    // One run receipt per period, each naming its invoice.
    const runs = await testDb().db.sql<{ period_start: string; invoice_id: string }[]>`
      SELECT period_start::text AS period_start, invoice_id FROM subscription_runs
      WHERE organization_id = ${s.org.organizationId} AND subscription_id = ${s.subscriptionId} ORDER BY period_start`;
    assert.deepEqual(runs.map((r) => [r.period_start, r.invoice_id]), rows.map((r) => [r.period_start, r.id]));
    // The events: one subscription.invoiced and one invoice.issued per period.
    const events = await testDb().db.sql<{ type: string }[]>`
      SELECT type FROM events WHERE organization_id = ${s.org.organizationId} AND type IN ('subscription.invoiced', 'invoice.issued') ORDER BY id`;
    assert.equal(events.filter((e) => e.type === 'subscription.invoiced').length, PERIODS);
    assert.equal(events.filter((e) => e.type === 'invoice.issued').length, PERIODS);
    // Each invoice mailed once (autoSend, the customer has an e-mail).
    assert.deepEqual(
      rows.map((r) => messageIds().filter((m) => m.startsWith(`${r.id}.invoice@`)).length),
      starts.map(() => 1),
    );
    const sub = (await call(t.app, 'GET', `/v1/subscriptions/${s.subscriptionId}`, { key: s.org.apiKey })).body.data;
    assert.deepEqual(
      [sub.status, sub.nextInvoiceDate, sub.invoiceCount, sub.periodsBehind, sub.latestInvoice?.periodStart],
      ['active', addDays(s.start, 7 * PERIODS), PERIODS, 0, starts[PERIODS - 1]],
    );
    const listed = (await call(t.app, 'GET', `/v1/subscriptions/${s.subscriptionId}/invoices?limit=100`, { key: s.org.apiKey })).body.data as { periodStart: string }[];
    assert.deepEqual(listed.map((i) => i.periodStart), [...starts].reverse());
  }

  /** The schedule of a fresh story, killed at `fault` on its first period and finished by a fresh process. */
  async function killAndRestart(fault: Fault): Promise<{ story: Story; stoppedAt: string; left: InvoiceRow[] }> {
    const port = await freePort();
    const faulty = await startWorker(port, fault);
    let fresh: Worker | undefined;
    try {
      const story = await subscribe();
      await advance(story.org, ADVANCE_DAYS);
      const stopped = await within(`the worker to stop at ${fault}`, faulty.stopped, 30_000);
      assert.equal(stopped.point, fault);
      await faulty.kill();
      const left = await invoiceRows(story);
      fresh = await startWorker(port);
      await settled(story);
      return { story, stoppedAt: stopped.invoiceId, left };
    } finally {
      await faulty.kill();
      await fresh?.kill();
    }
  }

  it('killed after the period was reserved with its run receipt, before the step was journaled: the period is issued once, the next ones follow', async () => {
    const { story, stoppedAt, left } = await killAndRestart('reserved');
    // What the dead process left: the first period's invoice with its number, still issuing.
    assert.deepEqual(left.map((r) => [r.id, r.period_start, r.status, r.number]), [[stoppedAt, story.start, 'issuing', '1']]);
    await assertOnePerPeriod(story);
    assert.equal((await invoiceRows(story))[0]!.id, stoppedAt);
  });

  it('killed after the issue committed, before its step was journaled: nothing issued or mailed twice, no period skipped', async () => {
    const { story, stoppedAt, left } = await killAndRestart('issued');
    assert.deepEqual(left.map((r) => [r.id, r.period_start, r.status]), [[stoppedAt, story.start, 'issued']]);
    await assertOnePerPeriod(story);
  });

  it("killed after the issue was journaled, before the next period's run step: the next periods are run once each", async () => {
    const { story, stoppedAt, left } = await killAndRestart('next');
    assert.deepEqual(left.map((r) => [r.id, r.period_start, r.status]), [[stoppedAt, story.start, 'issued']]);
    await assertOnePerPeriod(story);
  });
});
