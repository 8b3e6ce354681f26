import assert from 'node:assert/strict';
import * as restate from '@restatedev/restate-sdk';
import { WORK, type WorkTarget } from '../../contracts/workflows.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { createBusinessClock } from '../../workflows/business-clock.ts';
import { createHousekeeping, MINUTE_MS, RETRY_INTERVAL_MS, RUN_INTERVAL_MS, type HousekeepingActivities, type HousekeepingState, type RunResult } from '../../workflows/housekeeping.ts';
import { createInvoiceIssue } from '../../workflows/invoice-issue.ts';
import { createInvoiceMail, type MailAttemptResult } from '../../workflows/invoice-mail.ts';
import { createPastDue, type PastDueResult } from '../../workflows/past-due.ts';
import { createPaymentReceipt } from '../../workflows/payment-receipt.ts';
import { createWebhookDelivery, type DeliveryNext, type WakeResult } from '../../workflows/webhook-delivery.ts';
import { createWebhookEvents } from '../../workflows/webhook-events.ts';
import { withActivityBoundary } from '../../workflows/shared/activity-boundary.ts';
import { RETRY } from '../../workflows/shared/durable.ts';
import type { WakeClaimActivities } from '../../workflows/shared/wake-claim.ts';
import { FakeEngine, handlerOf } from '../helpers/fake-durable-context.ts';

/** Workflow logic against fake activities: the durable loops' decisions, without restate-server or a database. */

const failing = (message: string) => () => Promise.reject(new Error(message));

/** The claim release every wake-index handler ends with: records what it was asked, answers no nudge. */
const released: [string, string, number | null][] = [];
const releaseWake = async (t: { service: string; key: string }, token: number | null) => (released.push([t.service, t.key, token]), null);

describe('workflow logic (fake activities, no servers)', () => {
  describe('retry policies', () => {
    it('every named policy is bounded', () => {
      for (const [name, policy] of Object.entries(RETRY)) {
        assert.ok(Number.isInteger(policy.maxRetryAttempts) && policy.maxRetryAttempts > 0, name);
      }
    });

    it('a business refusal crossing the activity boundary is terminal: one attempt, no retries', async () => {
      const engine = new FakeEngine();
      let calls = 0;
      const activities = withActivityBoundary({
        renderPaymentReceipt: async (): Promise<{ status: string }> => {
          calls++;
          throw new DomainError('payment_not_found', 'No such payment.');
        },
        parkWork: async () => true,
        releaseWake,
      });
      const render = handlerOf<null, { status: string }>(createPaymentReceipt(activities), 'render');
      assert.deepEqual(await render(engine.context('p1')), { status: 'parked' });
      assert.equal(calls, 1);
      assert.deepEqual(engine.steps.find((s) => s.name === 'render'), { name: 'render', attempts: 1, outcome: 'failed' });
    });

    it('a transient failure is retried up to the policy, then the work is parked with its error', async () => {
      const engine = new FakeEngine();
      const parked: [WorkTarget, string][] = [];
      const render = handlerOf<null, { status: string }>(
        createPaymentReceipt({ renderPaymentReceipt: failing('browser crashed'), parkWork: async (t, e) => (parked.push([t, e]), true), releaseWake }),
        'render',
      );
      assert.deepEqual(await render(engine.context('pay-1')), { status: 'parked' });
      assert.equal(engine.steps[0]!.attempts, RETRY.render.maxRetryAttempts);
      assert.deepEqual(parked, [[WORK.paymentReceipt('pay-1'), 'browser crashed']]);
    });
  });

  describe('WebhookDelivery: the wake-index row is the schedule', () => {
    const setup = (results: DeliveryNext[], release: WakeClaimActivities['releaseWake'] = releaseWake) => {
      const engine = new FakeEngine();
      const wake = handlerOf<{ token?: number; claim?: number } | null, WakeResult>(
        createWebhookDelivery({ deliverWebhook: async () => results.shift() ?? { next: 'done', status: 'delivered' }, releaseWake: release }),
        'wake',
      );
      return { engine, wake };
    };

    it('an attempt that must wait arms no timer of its own; the release tells the shard scheduler when the retry is due', async () => {
      const asked: (number | null)[] = [];
      const { engine, wake } = setup([{ next: 'wait', dueInMs: 5000, status: 'failed' }], async (_t, token) => (asked.push(token), { shard: 3, nudgeAtMs: 12_345 }));
      assert.deepEqual(await wake(engine.context('d1'), { claim: 41 }), { status: 'failed', nextInMs: 5000 });
      assert.deepEqual(asked, [41]);
      assert.deepEqual(engine.sentTo('WebhookDelivery', 'wake'), []);
      assert.deepEqual(engine.sentTo('WakeScheduler', 'nudge').map((c) => [c.key, c.input, c.delayMs]), [['3', { atMs: 12_345 }, undefined]]);
    });

    it('a timer armed before the wake index scheduled retries: a stale one does nothing, the current one cancels nothing and clears the state', async () => {
      const { engine, wake } = setup([{ next: 'done', status: 'delivered' }]);
      engine.context('d2').set('s', { token: 1, pendingWake: 'inv_timer' });
      assert.deepEqual(await wake(engine.context('d2'), { token: 0 }), { ignored: 'stale' });
      assert.deepEqual(await wake(engine.context('d2', 'inv_timer'), { token: 1 }), { status: 'delivered' });
      assert.deepEqual(engine.cancelled, []);
      assert.equal(engine.state.get('d2')!.size, 0, 'the object keeps no state');
    });

    it('a database that stays away sends nothing (the wake index row stays for the backstop)', async () => {
      const engine = new FakeEngine();
      const wake = handlerOf<{ token?: number }, WakeResult>(createWebhookDelivery({ deliverWebhook: failing('connection refused'), releaseWake }), 'wake');
      assert.deepEqual(await wake(engine.context('d3'), {}), { error: 'connection refused' });
      assert.equal(engine.sent.length, 0);
      assert.equal(engine.steps[0]!.attempts, RETRY.database.maxRetryAttempts);
    });
  });

  describe('Housekeeping: the one durable loop', () => {
    const activities = (over: Partial<HousekeepingActivities> = {}): HousekeepingActivities => ({
      purgeIdempotencyKeys: async () => 7,
      shardsWithLostWork: async () => [],
      drainEventOutbox: async () => {},
      ...over,
    });
    const handlers = (a: HousekeepingActivities) => {
      const def = createHousekeeping(a);
      return {
        start: handlerOf<null, RunResult>(def, 'start'),
        wake: handlerOf<{ gen: number }, RunResult>(def, 'wake'),
        status: handlerOf<null, HousekeepingState>(def, 'status'),
      };
    };

    it('start runs the job, arms one wake-up an interval later, and a second start while armed does nothing', async () => {
      const engine = new FakeEngine();
      const h = handlers(activities());
      assert.deepEqual(await h.start(engine.context('idempotency')), { ran: true, count: 7, nextRunAt: engine.now + RUN_INTERVAL_MS });
      assert.deepEqual(await h.start(engine.context('idempotency')), { ran: false, reason: 'already_armed', nextRunAt: engine.now + RUN_INTERVAL_MS });
      const wakes = engine.sentTo('Housekeeping', 'wake');
      assert.deepEqual(wakes.map((w) => [w.key, w.input, w.delayMs]), [['idempotency', { gen: 1 }, RUN_INTERVAL_MS]]);
    });

    it('a failed run is recorded in the state and comes back sooner', async () => {
      const engine = new FakeEngine();
      const h = handlers(activities({ purgeIdempotencyKeys: failing('database down') }));
      const result = await h.start(engine.context('idempotency'));
      assert.deepEqual(result, { ran: true, count: null, nextRunAt: engine.now + RETRY_INTERVAL_MS });
      assert.equal((await h.status(engine.context('idempotency'))).lastError, 'database down');
      assert.match(engine.warnings.join('\n'), /idempotency gave up after its retries: database down/);
    });

    it('due-work nudges the scheduler of every shard with lost work and drains the outbox, every minute', async () => {
      const engine = new FakeEngine();
      let drained = 0;
      const h = handlers(activities({ shardsWithLostWork: async (grace) => (grace === MINUTE_MS ? [2, 5] : []), drainEventOutbox: async () => void drained++ }));
      assert.deepEqual(await h.start(engine.context('due-work')), { ran: true, count: 2, nextRunAt: engine.now + MINUTE_MS });
      assert.deepEqual(engine.sentTo('WakeScheduler', 'nudge').map((c) => [c.key, c.input]), [['2', { atMs: null }], ['5', { atMs: null }]]);
      assert.equal(drained, 1);
      const [timer] = engine.sentTo('Housekeeping', 'wake');
      assert.deepEqual(await h.wake(engine.context('due-work', timer!.invocationId), { gen: 0 }), { ran: false, reason: 'stale_wake', nextRunAt: engine.now + MINUTE_MS });
    });

    it('the armed wake-up of a job stored under its former name (lost-work) clears that key and arms nothing', async () => {
      const engine = new FakeEngine();
      const h = handlers(activities({ shardsWithLostWork: async () => [1] }));
      const before: Omit<HousekeepingState, 'lastRunCount'> & { lastDeleted: number } = { gen: 3, pendingWake: 'inv_old', nextRunAt: engine.now, lastRunAt: null, lastDeleted: 2, lastError: null };
      engine.context('lost-work').set('s', before);
      assert.deepEqual(await h.wake(engine.context('lost-work'), { gen: 3 }), { ran: false, reason: 'stale_wake', nextRunAt: null });
      assert.deepEqual([...engine.state.get('lost-work')!.keys()], []);
      assert.deepEqual(engine.sent, []);
    });

    it('a count stored under its former name (lastDeleted) reads as lastRunCount', async () => {
      const engine = new FakeEngine();
      const h = handlers(activities());
      const before: Omit<HousekeepingState, 'lastRunCount'> & { lastDeleted: number } = { gen: 1, pendingWake: null, nextRunAt: null, lastRunAt: null, lastDeleted: 5, lastError: null };
      engine.context('idempotency').set('s', before);
      const status = await h.status(engine.context('idempotency'));
      assert.equal(status.lastRunCount, 5);
      assert.ok(!('lastDeleted' in status));
    });

    it('an unknown job is refused for good', async () => {
      const h = handlers(activities());
      await assert.rejects(h.start(new FakeEngine().context('nonsense')), (err) => err instanceof restate.TerminalError && /No housekeeping job/.test(err.message));
    });
  });

  describe('BusinessClock: hands the organisation to its shard scheduler', () => {
    it("nudges the scheduler of the organisation's shard to run now, and reads nothing itself", async () => {
      const engine = new FakeEngine();
      const wakeDue = handlerOf<null, { shard: number }>(createBusinessClock(), 'wakeDue');
      const org = '01900000-0000-7000-8000-00000000000d';
      assert.deepEqual(await wakeDue(engine.context(org)), { shard: 5 });
      assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key, c.input]), [['WakeScheduler', 'nudge', '5', { atMs: null }]]);
      assert.deepEqual(engine.steps, []);
    });
  });

  describe('InvoiceMail and InvoiceIssue', () => {
    it('mails once and records; a mail that exhausts its retries is recorded as undeliverable', async () => {
      const engine = new FakeEngine();
      const recorded: string[] = [];
      const deliver = handlerOf<null, { status: string }>(
        createInvoiceMail({
          mailInvoice: failing('421 try later'),
          recordDelivery: async () => ({ status: 'sent' }),
          giveUpDelivery: async (_kind, _id, reason) => (recorded.push(reason), { status: 'failed', code: 'mail_undeliverable' }),
          parkWork: async () => true,
          releaseWake,
        }),
        'deliver',
      );
      assert.deepEqual(await deliver(engine.context('inv-1')), { status: 'failed', code: 'mail_undeliverable' });
      assert.deepEqual(recorded, ['421 try later']);
      assert.equal(engine.steps[0]!.attempts, RETRY.mail.maxRetryAttempts);
    });

    it('a mail taken by the server whose record cannot be written is parked, never mailed again', async () => {
      const engine = new FakeEngine();
      let mailed = 0;
      const parked: WorkTarget[] = [];
      const deliver = handlerOf<null, { status: string }>(
        createInvoiceMail({
          mailInvoice: async (): Promise<MailAttemptResult> => (mailed++, { kind: 'sent', messageId: '<m@x>' }),
          recordDelivery: failing('database down'),
          giveUpDelivery: async () => ({ status: 'failed' }),
          parkWork: async (t) => (parked.push(t), true),
          releaseWake,
        }),
        'deliver',
      );
      assert.deepEqual(await deliver(engine.context('inv-2')), { status: 'parked' });
      assert.equal(mailed, 1);
      assert.deepEqual(parked, [WORK.invoiceMail('inv-2')]);
    });

    const org = '01900000-0000-7000-8000-000000000002';

    it("a finished issue that asked for mail hands the queued send to the organisation's shard scheduler, and releases its claim", async () => {
      const engine = new FakeEngine();
      released.length = 0;
      const finish = handlerOf<{ claim: number }, { finished: boolean }>(
        createInvoiceIssue({ finishInvoiceIssue: async () => ({ finished: true, mail: true, dunning: null, organizationId: org }), parkWork: async () => true, releaseWake }),
        'finish',
      );
      assert.deepEqual(await finish(engine.context('inv-3'), { claim: 7 }), { finished: true });
      assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key, c.input]), [['WakeScheduler', 'nudge', '2', { atMs: null }]]);
      assert.deepEqual(released, [['InvoiceIssue', 'inv-3', 7]]);
    });

    it('an issue finished with its due date already passed hands its dunning on at once', async () => {
      const engine = new FakeEngine();
      const finish = handlerOf<null, { finished: boolean }>(
        createInvoiceIssue({ finishInvoiceIssue: async () => ({ finished: true, mail: false, dunning: `${org}:inv-4`, organizationId: org }), parkWork: async () => true, releaseWake }),
        'finish',
      );
      await finish(engine.context('inv-4'));
      assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key]), [['WakeScheduler', 'nudge', '2']]);
    });
  });

  describe('PastDue: one step per look, its row its schedule', () => {
    it('announces and answers the next look, then releases its claim', async () => {
      const engine = new FakeEngine();
      released.length = 0;
      const wake = handlerOf<{ claim: number }, PastDueResult>(
        createPastDue({ announcePastDue: async () => ({ changed: 2, next: '2026-12-01T23:00:00.000Z' }), parkWork: async () => true, releaseWake }),
        'wake',
      );
      assert.deepEqual(await wake(engine.context('org-9'), { claim: 5 }), { changed: 2, next: '2026-12-01T23:00:00.000Z' });
      assert.deepEqual(engine.steps.map((st) => st.name), ['announce', 'release']);
      assert.deepEqual(released, [['PastDue', 'org-9', 5]]);
    });

    it('parks its row when the database stays away', async () => {
      const engine = new FakeEngine();
      const parked: WorkTarget[] = [];
      const wake = handlerOf<null, PastDueResult>(
        createPastDue({ announcePastDue: failing('database down'), parkWork: async (t) => (parked.push(t), true), releaseWake }),
        'wake',
      );
      assert.deepEqual(await wake(engine.context('org-8')), { parked: 'database down' });
      assert.deepEqual(parked, [WORK.pastDue('org-8')]);
    });
  });

  describe('WebhookEvents', () => {
    it("hands the deliveries still pending after their first attempt to the organisation's shard scheduler", async () => {
      const engine = new FakeEngine();
      const route = handlerOf<unknown, { pending: number }>(createWebhookEvents({ fanOutAndDeliver: async () => ['d-1', 'd-2'] }), 'route');
      assert.deepEqual(await route(engine.context('unused'), { eventId: 'e', organizationId: '01900000-0000-7000-8000-00000000000f' }), { pending: 2 });
      assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key]), [['WakeScheduler', 'nudge', '7']]);
      await assert.rejects(route(engine.context('unused'), {}), (err) => err instanceof restate.TerminalError);
    });
  });
});
