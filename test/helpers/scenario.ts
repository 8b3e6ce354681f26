import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createSmtpMailer } from '../../activities/mail/smtp-mailer.ts';
import { createLocalLetterService } from '../../activities/letters/local-letters.ts';
import { createLocalCollectionPartner } from '../../activities/collections/local-partner.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { dueWakes } from '../../services/clock/wake-index.ts';
import { createRestateWakeups } from '../../services/clock/wakeups.ts';
import { startEventRelay, type RunningRelay } from '../../services/events/event-relay.ts';
import { createRestateEventForwarder } from '../../services/events/restate-event-forwarder.ts';
import { createRestateMailDispatch } from '../../services/invoices/restate-mail-dispatch.ts';
import { createRestateReceiptDispatch } from '../../services/payments/receipt-dispatch.ts';
import type { Plan } from '../../services/organizations/plans.ts';
import { replanDunning } from '../../services/reminders/replan-dunning.ts';
import { createEngineClient } from '../../services/shared/engine-client.ts';
import { createActivities, registerDeployment, restateWebhookHandOff, startWorkflowsEndpoint, type WorkflowsEndpoint } from '../../workflows/main.ts';
import { call, createTestOrg, startTestApp, testDb, testRenderer, type ApiResponse, type TestApp, type TestOrg } from './context.ts';
import { startTestRestate, type TestRestate } from './restate.ts';

/**
 * A calendar-walking scenario: one sandbox organisation on the whole stack (the API, a real restate-server with the
 * workflows endpoint, PostgreSQL, Chromium, an SMTP server on loopback, local letters, the event relay), with the verbs a story needs:
 * `customer`, `issue`, `advance`, `pay`, `today`, `settle`. Scenarios read like the timeline they test:
 *
 *   const s = await startScenario();
 *   const inv = await s.issue({ lines, paymentTermsDays: 14 });
 *   await s.advance(20);
 *   await s.pay(inv.id, inv.grossOere);
 *
 * Each verb goes through the public API, as an integrator's code would; `settle` waits until the organisation's
 * durable work has run (nothing due left in the wake index, nothing waiting in the event outbox).
 */
export interface Scenario {
  org: TestOrg;
  api: TestApp;
  restate: TestRestate;
  /** Every mail the SMTP server on loopback accepted so far, as raw RFC 5322 text, in order. */
  mails(): string[];
  /** Where the letters went (PDF and JSON sidecar per letter). */
  letterDir: string;
  /** Where the local collection partner writes each hand-over (one JSON file per case). */
  collectionsDir: string;
  /** A company customer with an e-mail address (or the body given). */
  customer(body?: Record<string, unknown>): Promise<string>;
  /** Creates and issues an invoice (`send: true` also mails it); returns the invoice as the API shows it. */
  issue(opts?: { customerId?: string; lines?: unknown[]; paymentTermsDays?: number; dueDate?: string; send?: boolean }): Promise<Invoice>;
  /** Moves the organisation's test clock forward by whole days and waits until what came due has run. */
  advance(days: number): Promise<{ today: string }>;
  /** Registers a payment (on the business today unless `paymentDate` is given) and waits for its receipt. */
  pay(invoiceId: string, amountOere: number, paymentDate?: string): Promise<ApiResponse>;
  /** The organisation's business today. */
  today(): Promise<string>;
  /** Reads an invoice. */
  invoice(id: string): Promise<Invoice>;
  /** The event types recorded for the organisation, oldest first. */
  eventTypes(): Promise<string[]>;
  settle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface Invoice {
  id: string;
  number: number;
  status: string;
  dueDate: string;
  grossOere: number;
  balanceOere: number;
  [field: string]: unknown;
}

const DEFAULT_LINES = [{ description: 'Rådgivning', quantity: 1, unitPriceOere: 100_000, vatRateBps: 2500 }];

export async function startScenario(opts: { orgName?: string; plan?: Plan; restateEnv?: Record<string, string> } = {}): Promise<Scenario> {
  const restate = await startTestRestate(opts.restateEnv);
  const { db, keyring } = testDb();
  // A shard's scheduler hands on every due row of its shard, whichever organisation's: rows that earlier test files
  // left due (sandbox clocks far ahead, no engine running then) would otherwise be delivered by this scenario's
  // workflows, into its mailbox and letter directory. A scenario's engine starts with an empty index.
  await db.sql`DELETE FROM wake_index`;
  // A real SMTP server on loopback takes the mails, as an organisation's mail relay would.
  const received: string[] = [];
  const smtp = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData: (stream, _session, cb) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  const letterDir = mkdtempSync(join(tmpdir(), 'faktura-scenario-letters-'));
  const collectionsDir = mkdtempSync(join(tmpdir(), 'faktura-scenario-collections-'));
  // SCENARIO_LOGS=1 shows the workflows endpoint's log on stderr, to see why durable work did not settle.
  const silent = process.env.SCENARIO_LOGS ? process.stderr : new Writable({ write: (_c, _e, cb) => cb() });
  let endpoint: WorkflowsEndpoint | undefined;
  let relay: RunningRelay | undefined;
  let api: TestApp | undefined;
  try {
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(
        db,
        { idempotencyRetentionDays: 30, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined, webhookAllowLoopback: true },
        {
          keyring,
          mailer: createSmtpMailer(smtpUrl, () => {}),
          pdf: testRenderer(),
          webhookHandOff: restateWebhookHandOff(restate.ingressUrl, db),
          drainEventOutbox: () => relay?.drain() ?? Promise.resolve(),
          letters: createLocalLetterService(letterDir, () => {}),
          collectionPartner: createLocalCollectionPartner(collectionsDir, () => {}),
          payBaseUrl: 'http://127.0.0.1:3001',
        },
      ),
      host: '127.0.0.1',
      port: await freePort(),
      identityKeys: restate.identityKeys,
      logStream: silent,
    });
    await registerDeployment(restate.adminUrl, endpoint.url);
    relay = await startEventRelay(db, createRestateEventForwarder(restate.ingressUrl));
    api = await startTestApp({
      mailDispatch: createRestateMailDispatch(restate.ingressUrl, testDb().db),
      receiptDispatch: createRestateReceiptDispatch(restate.ingressUrl, testDb().db),
      wakeups: createRestateWakeups(restate.ingressUrl),
      webhooks: { allowLoopback: true },
      engine: createEngineClient(restate.ingressUrl, testDb().db),
      onReminderSettingsChanged: (org) => replanDunning(db, createRestateWakeups(restate.ingressUrl), org),
    });
  } catch (err) {
    await api?.close();
    await relay?.close();
    await endpoint?.close();
    await restate.stop();
    await new Promise<void>((r) => smtp.close(() => r()));
    throw err;
  }
  const app = api;
  const org = await createTestOrg({ name: opts.orgName ?? 'Bager Hansen ApS', ...(opts.plan ? { plan: opts.plan } : {}) });
  const req = (method: string, url: string, body?: unknown) => call(app.app, method, url, { key: org.apiKey, ...(body !== undefined ? { body } : {}) });
  const ok = (res: ApiResponse, status: number, what: string): ApiResponse => {
    assert.equal(res.status, status, `${what}: ${res.raw}`);
    return res;
  };

  const settle = async (timeoutMs = 15_000): Promise<void> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const due = await dueWakes(db, org.organizationId, null, 1);
      const [outbox] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_outbox WHERE organization_id = ${org.organizationId}`;
      if (due.length === 0 && outbox!.n === 0) return;
      if (Date.now() > until) throw new Error(`the organisation's durable work did not settle: ${JSON.stringify(due)} due, ${outbox!.n} events waiting`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const today = async () => ok(await req('GET', '/v1/test-clock'), 200, 'read the test clock').body.data.today as string;
  const invoice = async (id: string) => ok(await req('GET', `/v1/invoices/${id}`), 200, 'read the invoice').body.data as Invoice;

  const customer = async (body?: Record<string, unknown>) => {
    const res = await req('POST', '/v1/customers', body ?? { type: 'company', name: 'Kunde A/S', cvr: '87654321', email: 'bogholderi@kunde.dk' });
    return ok(res, 201, 'create the customer').body.data.id as string;
  };

  return {
    org,
    api: app,
    restate,
    mails: () => [...received],
    letterDir,
    collectionsDir,
    customer,
    async issue(o = {}) {
      const customerId = o.customerId ?? (await customer());
      const body = {
        customerId,
        lines: o.lines ?? DEFAULT_LINES,
        ...(o.paymentTermsDays !== undefined ? { paymentTermsDays: o.paymentTermsDays } : {}),
        ...(o.dueDate !== undefined ? { dueDate: o.dueDate } : {}),
      };
      const res = ok(await req('POST', `/v1/invoices?issue=true${o.send ? '&send=true' : ''}`, body), 201, 'issue the invoice');
      await settle();
      return res.body.data as Invoice;
    },
    async advance(days) {
      const res = ok(await req('POST', '/v1/test-clock/advance', { days }), 200, 'advance the test clock');
      await settle();
      return { today: res.body.data.today as string };
    },
    async pay(invoiceId, amountOere, paymentDate) {
      const res = ok(await req('POST', `/v1/invoices/${invoiceId}/payments`, { amountOere, paymentDate: paymentDate ?? (await today()) }), 201, 'register the payment');
      await settle();
      return res;
    },
    today,
    invoice,
    async eventTypes() {
      const rows = await db.sql<{ type: string }[]>`SELECT type FROM events WHERE organization_id = ${org.organizationId} ORDER BY id`;
      return rows.map((r) => r.type);
    },
    settle,
    async close() {
      await app.close();
      await relay?.close();
      await endpoint?.close();
      await restate.stop();
      await new Promise<void>((r) => smtp.close(() => r()));
    },
  };
}
