import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../../deploy/local/ports.ts';
import { createRestateWakeups } from '../../services/clock/wakeups.ts';
import { startEventRelay, type RunningRelay } from '../../services/events/event-relay.ts';
import type { EventType } from '../../contracts/events.ts';
import { recordEvent, type EventRecord } from '../../services/events/record-event.ts';
import { createRestateEventForwarder } from '../../services/events/restate-event-forwarder.ts';
import { RETRY_SCHEDULE_MS } from '../../services/webhooks/retry-policy.ts';
import { shardsWithLostWork, wakeShardOf } from '../../services/clock/wake-index.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { createActivities, registerDeployment, restateWebhookHandOff, startWorkflowsEndpoint, type WorkflowsEndpoint } from '../../workflows/main.ts';
import { testActivityResources } from '../helpers/activities.ts';
import { call, createTestOrg, startTestApp, testClock, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { eventually, Receiver } from '../helpers/webhooks.ts';
import { metricReaches, metricValue } from '../helpers/metrics.ts';

interface DeliveryRow {
  id: string;
  status: string;
  round: number;
  attempts: number;
  next_attempt_at: Date | null;
}

/**
 * Webhooks end to end: API → event log → relay → Restate (fan-out, one delivery object per event and endpoint,
 * business-clock retries) → a real HTTP receiver on loopback, verified with the standardwebhooks library as an
 * integrator would.
 */
describe('webhook delivery', function () {
  this.timeout(60_000);
  let restate: TestRestate;
  let endpoint: WorkflowsEndpoint;
  let relay: RunningRelay;
  let t: TestApp;
  const silent = new Writable({ write: (_c, _e, cb) => cb() });

  before(async () => {
    restate = await startTestRestate();
    const { db } = testDb();
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(
        db,
        { idempotencyRetentionDays: 30, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined, webhookAllowLoopback: true },
        { ...testActivityResources(), clock: testClock(), webhookHandOff: (id) => restateWebhookHandOff(restate.ingressUrl, testDb().db)(id) },
      ),
      host: '127.0.0.1',
      port: await freePort(),
      identityKeys: restate.identityKeys,
      logStream: process.env.DEBUG_WF ? process.stderr : silent,
    });
    await registerDeployment(restate.adminUrl, endpoint.url);
    t = await startTestApp({ wakeups: createRestateWakeups(restate.ingressUrl), webhooks: { allowLoopback: true } });
    relay = await startEventRelay(db, createRestateEventForwarder(restate.ingressUrl), { sweepIntervalMs: 500 });
  });
  after(async () => {
    await relay?.close();
    await t?.close();
    await endpoint?.close();
    await restate?.stop();
  });

  const register = async (org: TestOrg, url: string, eventTypes: string[]) => {
    const res = await call(t.app, 'POST', '/v1/webhook-endpoints', { key: org.apiKey, body: { url, eventTypes } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data as { id: string; secret: string };
  };
  const emit = (org: TestOrg, type: EventType = 'invoice.sent', entityId = uuidv7()) =>
    testDb().db.tx((tx) => recordEvent(tx, { organizationId: org.organizationId, type, entityId, data: { invoiceId: entityId, externalReference: 'ERP-1' } } as EventRecord));
  const feedItem = async (org: TestOrg, id: string) =>
    ((await call(t.app, 'GET', '/v1/events?limit=200', { key: org.apiKey })).body.data as { id: string }[]).find((e) => e.id === id);
  const deliveryOf = async (endpointId: string, messageId: string): Promise<DeliveryRow | undefined> => {
    const [row] = await testDb().db.sql<DeliveryRow[]>`
      SELECT id, status, round, attempts, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND message_id = ${messageId}`;
    return row;
  };
  const until = (what: string, endpointId: string, messageId: string, ok: (d: DeliveryRow) => boolean) =>
    eventually(what, async () => {
      const d = await deliveryOf(endpointId, messageId);
      return d && ok(d) ? d : undefined;
    });
  const verify = (secret: string, r: { headers: Record<string, unknown>; body: string }) =>
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { id: string };

  it('delivers an issued invoice within a second, signed, in the feed’s exact shape, once', async () => {
    const receiver = await new Receiver().start();
    try {
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['invoice.issued']);
      const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
      const metricsBefore = await Promise.all([
        metricValue('faktura_webhook_deliveries_total', { outcome: 'delivered' }),
        metricValue('faktura_webhook_delivery_lag_seconds_count', {}),
        metricValue('faktura_webhook_delivery_lag_seconds_sum', {}),
      ]);
      const postedAt = Date.now();
      const issued = await call(t.app, 'POST', '/v1/invoices?issue=true', {
        key: org.apiKey,
        body: { customerId, externalReference: 'ERP-9', lines: [{ description: 'Vare', quantity: 1, unitPriceOere: 10000 }] },
      });
      assert.equal(issued.status, 201);
      const committedAt = Date.now();
      const [got] = await receiver.waitFor(1);
      assert.ok(got!.at - committedAt < 1000, `delivered ${got!.at - committedAt} ms after the response`);
      const payload = verify(ep.secret, got!);
      const [event] = await testDb().db.sql<{ id: string }[]>`SELECT id FROM events WHERE entity_id = ${issued.body.data.id} AND type = 'invoice.issued'`;
      assert.equal(got!.headers['webhook-id'], event!.id);
      assert.match(String(got!.headers['webhook-timestamp']), /^\d{10}$/);
      assert.ok(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000) < 5);
      assert.equal(got!.headers['content-type'], 'application/json');
      assert.equal(got!.body, JSON.stringify(await feedItem(org, event!.id)), 'the body is the feed item, byte for byte');
      assert.deepEqual((payload as unknown as { invoice: unknown }).invoice, { id: issued.body.data.id, sekvensnummer: 1 });
      const d = await until('delivered', ep.id, event!.id, (x) => x.status === 'delivered');
      assert.equal(d.attempts, 1);
      const attempts = await testDb().db.sql`SELECT round, number, status_code, succeeded, error FROM webhook_attempts WHERE delivery_id = ${d.id}`;
      assert.deepEqual(attempts.map((a) => ({ ...a })), [{ round: 1, number: 1, status_code: 204, succeeded: true, error: null }]);
      const [wake] = await testDb().db.sql`SELECT 1 FROM wake_index WHERE key = ${d.id}`;
      assert.equal(wake, undefined, 'nothing left to wake');
      // The workflows' metrics (this process's registry): one delivered attempt, its lag from the event's commit.
      assert.equal(await metricReaches('faktura_webhook_deliveries_total', { outcome: 'delivered' }, metricsBefore[0] + 1), metricsBefore[0] + 1);
      assert.equal(await metricValue('faktura_webhook_delivery_lag_seconds_count', {}), metricsBefore[1] + 1);
      const lag = (await metricValue('faktura_webhook_delivery_lag_seconds_sum', {})) - metricsBefore[2];
      // From the event's creation (its transaction's start, inside the request) to the receiver's answer.
      assert.ok(lag > 0 && lag < (Date.now() - postedAt) / 1000, `lag ${lag} s`);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receiver.received.length, 1);
    } finally {
      await receiver.stop();
    }
  });

  it('delivers payment.received and invoice.paid for a payment, each signed and in its family block', async () => {
    const receiver = await new Receiver().start();
    try {
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['payment.received', 'invoice.paid']);
      const customerId = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S' } })).body.data.id;
      const invoice = (
        await call(t.app, 'POST', '/v1/invoices?issue=true', {
          key: org.apiKey,
          body: { customerId, externalReference: 'ERP-10', lines: [{ description: 'Vare', quantity: 1, unitPriceOere: 10000 }] },
        })
      ).body.data;
      const today = (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today;
      const paid = await call(t.app, 'POST', `/v1/invoices/${invoice.id}/payments`, {
        key: org.apiKey,
        body: { amountOere: invoice.grossOere, paymentDate: today },
      });
      assert.equal(paid.status, 201, JSON.stringify(paid.body));
      const got = await receiver.waitFor(2);
      const payloads = got.map((r) => verify(ep.secret, r) as unknown as Record<string, { id: string; sekvensnummer: number } | string>);
      const byType = new Map(payloads.map((p) => [p.type as string, p]));
      assert.deepEqual([...byType.keys()].sort(), ['invoice.paid', 'payment.received']);
      assert.deepEqual(byType.get('payment.received')!.payment, { id: paid.body.meta.paymentId, sekvensnummer: 1 });
      assert.deepEqual(byType.get('invoice.paid')!.invoice, { id: invoice.id, sekvensnummer: 2 });
    } finally {
      await receiver.stop();
    }
  });

  it('scenario: receiver down through the whole retry schedule in business time, given-up after 8, replayed once it is back', async () => {
    const receiver = await new Receiver().start();
    const port = receiver.port;
    await receiver.stop(); // the integrator's server is down: connections are refused
    const org = await createTestOrg();
    const ep = await register(org, `http://127.0.0.1:${port}/hook`, ['invoice.sent']);
    const outcomes = () => Promise.all((['failed', 'given_up', 'delivered'] as const).map((outcome) => metricValue('faktura_webhook_deliveries_total', { outcome })));
    const outcomesBefore = await outcomes();
    const { id: eventId } = await emit(org);
    const businessNow = async () => Date.parse((await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.now);
    const advanceTo = async (ms: number) => {
      const res = await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { to: new Date(ms).toISOString() } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };

    for (let n = 1; n <= RETRY_SCHEDULE_MS.length; n++) {
      const d = await until(`attempt ${n}`, ep.id, eventId, (x) => x.attempts === n && x.status === 'failed');
      const wait = RETRY_SCHEDULE_MS[n - 1]!;
      const left = d.next_attempt_at!.getTime() - (await businessNow());
      assert.ok(left <= wait && left > wait - 3000, `attempt ${n + 1} is due ${wait} ms of business time after attempt ${n} (${left} left)`);
      if (n === 2) {
        // Four of the five minutes: not due yet, nothing happens.
        await advanceTo((await businessNow()) + 4 * 60_000);
        await new Promise((r) => setTimeout(r, 500));
        assert.equal((await deliveryOf(ep.id, eventId))!.attempts, 2);
      }
      await advanceTo(Math.max(d.next_attempt_at!.getTime(), (await businessNow()) + 1));
    }
    const gaveUp = await until('given-up', ep.id, eventId, (x) => x.status === 'given-up');
    assert.equal(gaveUp.attempts, 8);
    assert.equal(gaveUp.next_attempt_at, null);
    const attempts = await testDb().db.sql<{ number: number; succeeded: boolean; status_code: number | null; error: string }[]>`
      SELECT number, succeeded, status_code, error FROM webhook_attempts WHERE delivery_id = ${gaveUp.id} ORDER BY number`;
    assert.deepEqual(attempts.map((a) => a.number), [1, 2, 3, 4, 5, 6, 7, 8]);
    for (const a of attempts) {
      assert.equal(a.succeeded, false);
      assert.equal(a.status_code, null);
      assert.match(a.error, /ECONNREFUSED/);
    }
    const [wake] = await testDb().db.sql`SELECT 1 FROM wake_index WHERE key = ${gaveUp.id}`;
    assert.equal(wake, undefined);
    await metricReaches('faktura_webhook_deliveries_total', { outcome: 'given_up' }, outcomesBefore[1]! + 1);
    assert.deepEqual((await outcomes()).map((n, i) => n - outcomesBefore[i]!), [7, 1, 0], 'seven failed attempts counted, then the one given up');

    // The receiver comes back; a replay sends the given-up event once, and never again.
    await receiver.start(port);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const replay = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/replay`, { key: org.apiKey, body: { since } });
    assert.deepEqual(replay.body.data, { requeued: 1, enqueued: 0, possiblyMore: false });
    const [got] = await receiver.waitFor(1);
    // The business clock is more than a day ahead by now; webhook-timestamp stays real time (verify checks it too).
    assert.ok(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000) < 5);
    const payload = verify(ep.secret, got!);
    assert.equal(payload.id, eventId);
    assert.equal(got!.headers['webhook-id'], eventId);
    const done = await until('delivered', ep.id, eventId, (x) => x.status === 'delivered');
    assert.deepEqual({ round: done.round, attempts: done.attempts }, { round: 2, attempts: 1 });
    const again = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/replay`, { key: org.apiKey, body: { since } });
    assert.deepEqual(again.body.data, { requeued: 0, enqueued: 0, possiblyMore: false }, 'a delivered event is never re-sent');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(receiver.received.length, 1, 'delivered exactly once');
    await receiver.stop();
  });

  it('signs with both secrets for 24 hours after a rotation; each verifies on its own', async () => {
    const receiver = await new Receiver().start();
    try {
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['invoice.sent']);
      const rotated = (await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/rotate-secret`, { key: org.apiKey })).body.data;
      const { id } = await emit(org);
      const [got] = await receiver.waitFor(1);
      const signatures = String(got!.headers['webhook-signature']).split(' ');
      assert.equal(signatures.length, 2);
      for (const s of signatures) assert.match(s, /^v1,[A-Za-z0-9+/]{43}=$/);
      assert.equal(verify(rotated.secret, got!).id, id);
      assert.equal(verify(ep.secret, got!).id, id);
      // Once the overlap is over, only the new secret signs.
      await testDb().db.sql`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = ${ep.id}`;
      await emit(org);
      const [, second] = await receiver.waitFor(2);
      assert.equal(String(second!.headers['webhook-signature']).split(' ').length, 1);
      verify(rotated.secret, second!);
      assert.throws(() => verify(ep.secret, second!), /No matching signature/);
    } finally {
      await receiver.stop();
    }
  });

  it('delivers a test ping, signed, with no real data', async () => {
    const receiver = await new Receiver().start();
    try {
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['invoice.paid']);
      const res = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey });
      assert.equal(res.status, 202);
      const [got] = await receiver.waitFor(1);
      const payload = verify(ep.secret, got!);
      assert.deepEqual(payload, res.body.data);
      // The signed bytes are the ping exactly as the 202 showed it, keys in the envelope's order.
      assert.equal(got!.body, JSON.stringify(res.body.data));
      assert.equal(got!.headers['webhook-id'], res.body.data.id);
    } finally {
      await receiver.stop();
    }
  });

  it('an inactive endpoint receives nothing and queues nothing; a replay fetches what it missed', async () => {
    const receiver = await new Receiver().start();
    try {
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['invoice.sent']);
      await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body: { active: false } });
      const { id } = await emit(org);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(receiver.received.length, 0);
      assert.equal(await deliveryOf(ep.id, id), undefined, 'not queued');
      await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body: { active: true } });
      const replay = await call(t.app, 'POST', `/v1/webhook-endpoints/${ep.id}/replay`, { key: org.apiKey, body: { since: new Date(Date.now() - 60_000).toISOString() } });
      assert.deepEqual(replay.body.data, { requeued: 0, enqueued: 1, possiblyMore: false });
      const [got] = await receiver.waitFor(1);
      assert.equal(verify(ep.secret, got!).id, id);
    } finally {
      await receiver.stop();
    }
  });

  it('a delivery waiting for its retry resumes at once when its endpoint is reactivated, and stops when it is deactivated', async () => {
    const receiver = await new Receiver().start();
    try {
      receiver.status = () => 503;
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['invoice.sent']);
      const { id } = await emit(org);
      await until('first failure', ep.id, id, (x) => x.attempts === 1 && x.status === 'failed');
      await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body: { active: false } });
      // The 5 s retry comes due while the endpoint is inactive: it is not sent.
      await new Promise((r) => setTimeout(r, 5500));
      assert.equal(receiver.received.length, 1);
      receiver.status = () => 200;
      await call(t.app, 'PATCH', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey, body: { active: true } });
      const d = await until('delivered', ep.id, id, (x) => x.status === 'delivered');
      assert.equal(d.attempts, 2);
      assert.equal(receiver.received.length, 2);
    } finally {
      await receiver.stop();
    }
  });

  it('DELETE drops a delivery waiting for its retry: nothing more is sent', async () => {
    const receiver = await new Receiver().start();
    try {
      receiver.status = () => 500;
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['invoice.sent']);
      const { id } = await emit(org);
      await until('first failure', ep.id, id, (x) => x.attempts === 1);
      assert.equal((await call(t.app, 'DELETE', `/v1/webhook-endpoints/${ep.id}`, { key: org.apiKey })).status, 204);
      receiver.status = () => 200;
      await call(t.app, 'POST', '/v1/test-clock/advance', { key: org.apiKey, body: { days: 1 } });
      await new Promise((r) => setTimeout(r, 6000));
      assert.equal(receiver.received.length, 1);
    } finally {
      await receiver.stop();
    }
  });

  it('loses no event when the relay process is killed between commit and hand-off, and hands it on once', async () => {
    const receiver = await new Receiver().start();
    try {
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['invoice.sent']);
      await relay.close();
      const child = spawn(process.execPath, ['test/workflows/fixtures/relay-process.ts', process.env.TEST_DATABASE_URL!, restate.ingressUrl], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
        child.once('exit', (code) => reject(new Error(`relay child exited early (${code})`)));
      });
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGSTOP'); // the relay holds its notification but never acts on it
      const { id } = await emit(org);
      const [outbox] = await testDb().db.sql`SELECT 1 FROM event_outbox WHERE event_id = ${id}`;
      assert.ok(outbox, 'the committed event waits in the outbox');
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGKILL');
      await exited;
      assert.equal(receiver.received.length, 0);

      relay = await startEventRelay(testDb().db, createRestateEventForwarder(restate.ingressUrl), { sweepIntervalMs: 500 });
      const [got] = await receiver.waitFor(1);
      assert.equal(verify(ep.secret, got!).id, id);
      await eventually('outbox drained', async () => ((await testDb().db.sql`SELECT 1 FROM event_outbox WHERE event_id = ${id}`).length === 0 ? true : undefined));
      // A repeated hand-off of the same event (a relay that died before deleting its row) changes nothing.
      await createRestateEventForwarder(restate.ingressUrl).forward({ eventId: id, organizationId: org.organizationId });
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(receiver.received.length, 1);
      const [n] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ${id}`;
      assert.equal(n!.n, 1);
    } finally {
      await receiver.stop();
    }
  });

  it('the overdue sweep wakes a delivery whose wake-up was lost', async () => {
    const receiver = await new Receiver().start();
    // An API process without a workflow engine: the ping is committed, its post-commit wake-up fails.
    const lost = await startTestApp({ webhooks: { allowLoopback: true } });
    try {
      const org = await createTestOrg();
      const ep = await register(org, receiver.url, ['invoice.paid']);
      const ping = await call(lost.app, 'POST', `/v1/webhook-endpoints/${ep.id}/test`, { key: org.apiKey });
      assert.equal(ping.status, 202);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receiver.received.length, 0, 'nothing woke it');
      const shard = wakeShardOf(org.organizationId);
      const [row] = await testDb().db.sql<{ due: boolean }[]>`
        SELECT due_at < now() - interval '1 minute' AS due FROM wake_index WHERE service = 'WebhookDelivery' AND organization_id = ${org.organizationId}`;
      assert.equal(row!.due, false, 'not lost within the grace period');
      // What the workflows process does every minute, with the grace period already over: the organisation's shard
      // is found, and its scheduler nudged, which claims the row and sends it.
      assert.ok((await shardsWithLostWork(testDb().db, 0)).includes(shard));
      await createRestateWakeups(restate.ingressUrl).wakeDue(org.organizationId);
      const [got] = await receiver.waitFor(1);
      assert.equal(verify(ep.secret, got!).id, ping.body.data.id);
    } finally {
      await lost.close();
      await receiver.stop();
    }
  });

  it('hands on a burst of events, each delivered once, and leaves the outbox empty', async () => {
    const receiver = await new Receiver().start();
    try {
      const org = await createTestOrg();
      await register(org, receiver.url, ['invoice.sent']);
      const ids = (await Promise.all(Array.from({ length: 150 }, () => emit(org)))).map((e) => e.id);
      await receiver.waitFor(150, 30_000);
      await new Promise((r) => setTimeout(r, 300));
      const received = receiver.received.map((r) => String(r.headers['webhook-id']));
      assert.equal(received.length, 150);
      assert.deepEqual([...new Set(received)].sort(), [...ids].sort());
      const [left] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_outbox WHERE organization_id = ${org.organizationId}`;
      assert.equal(left!.n, 0);
    } finally {
      await receiver.stop();
    }
  });

  it('an endpoint that hangs holds back nobody: another endpoint of the same event is recorded and retried on its own time', async () => {
    // Takes the request and never answers (until it is closed), like a receiver stuck behind a dead database.
    const stuck = createServer(() => {});
    await new Promise<void>((r) => stuck.listen(0, '127.0.0.1', () => r()));
    const failing = new Receiver();
    failing.status = () => 500;
    await failing.start();
    try {
      const org = await createTestOrg();
      const hung = await register(org, `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/hook`, ['invoice.sent']);
      const erring = await register(org, failing.url, ['invoice.sent']);
      const { id } = await emit(org, 'invoice.sent');
      const [first] = await failing.waitFor(1);
      const recorded = await until('the failed attempt recorded while the other still hangs', erring.id, id, (d) => d.attempts === 1);
      assert.equal(recorded.status, 'failed');
      const dueAfter = recorded.next_attempt_at!.getTime() - first!.at;
      // Held back by the hanging endpoint, it would be due after that one's 15 s timeout plus the 5 s of the schedule.
      assert.ok(dueAfter >= RETRY_SCHEDULE_MS[0] && dueAfter < 12_000, `retry due ${dueAfter} ms after the attempt`);
      assert.equal((await deliveryOf(hung.id, id))!.attempts, 0, 'the hanging attempt is still out');
      const [, second] = await failing.waitFor(2);
      assert.ok(second!.at - first!.at < 12_000, `second attempt ${second!.at - first!.at} ms after the first`);
    } finally {
      stuck.closeAllConnections();
      await new Promise((r) => stuck.close(r));
      await failing.stop();
    }
  });

  it('fans one event out to every endpoint that wants it, and to none that does not', async () => {
    const receivers = await Promise.all([new Receiver().start(), new Receiver().start(), new Receiver().start()]);
    try {
      const org = await createTestOrg();
      const eps = [
        await register(org, receivers[0].url, ['invoice.sent', 'invoice.paid']),
        await register(org, receivers[1].url, ['invoice.sent']),
        await register(org, receivers[2].url, ['invoice.paid']),
      ];
      const { id } = await emit(org, 'invoice.sent');
      const [a] = await receivers[0].waitFor(1);
      const [b] = await receivers[1].waitFor(1);
      assert.equal(verify(eps[0]!.secret, a!).id, id);
      assert.equal(verify(eps[1]!.secret, b!).id, id);
      assert.throws(() => verify(eps[0]!.secret, b!), 'each endpoint signs with its own secret');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receivers[2].received.length, 0);
    } finally {
      for (const r of receivers) await r.stop();
    }
  });
});
