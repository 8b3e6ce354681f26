import assert from 'node:assert/strict';
import * as restate from '@restatedev/restate-sdk';
import { WORK, type WorkTarget } from '../../contracts/workflows.ts';
import { DomainError } from '../../services/shared/errors.ts';
import type { WakeRef } from '../../services/clock/wake-index.ts';
import { createBusinessClock } from '../../workflows/business-clock.ts';
import { createHousekeeping, MINUTE_MS, RETRY_INTERVAL_MS, RUN_INTERVAL_MS, type HousekeepingActivities, type HousekeepingState, type RunResult } from '../../workflows/housekeeping.ts';
import { createInvoiceIssue } from '../../workflows/invoice-issue.ts';
import { createInvoiceMail, type MailAttemptResult } from '../../workflows/invoice-mail.ts';
import { createPaymentReceipt } from '../../workflows/payment-receipt.ts';
import { createWebhookDelivery, type DeliveryNext, type WakeResult } from '../../workflows/webhook-delivery.ts';
import { createWebhookEvents } from '../../workflows/webhook-events.ts';
import { withActivityBoundary } from '../../workflows/shared/activity-boundary.ts';
import { RETRY } from '../../workflows/shared/durable.ts';
import { FakeEngine, handlerOf } from '../helpers/fake-durable-context.ts';

/** Workflow logic against fake activities: the durable loops' decisions, without restate-server or a database. */

const failing = (message: string) => () => Promise.reject(new Error(message));

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
        createPaymentReceipt({ renderPaymentReceipt: failing('browser crashed'), parkWork: async (t, e) => (parked.push([t, e]), true) }),
        'render',
      );
      assert.deepEqual(await render(engine.context('pay-1')), { status: 'parked' });
      assert.equal(engine.steps[0]!.attempts, RETRY.render.maxRetryAttempts);
      assert.deepEqual(parked, [[WORK.paymentReceipt('pay-1'), 'browser crashed']]);
    });
  });

  describe('WebhookDelivery: the armed timer', () => {
    const setup = (results: DeliveryNext[]) => {
      const engine = new FakeEngine();
      const wake = handlerOf<{ token?: number } | null, WakeResult>(
        createWebhookDelivery({ deliverWebhook: async () => results.shift() ?? { next: 'done', status: 'delivered' } }),
        'wake',
      );
      return { engine, wake };
    };

    it('a poke that must wait arms exactly one timer with the next token; a second poke cancels it and arms another', async () => {
      const { engine, wake } = setup([
        { next: 'wait', dueInMs: 5000, status: 'failed' },
        { next: 'wait', dueInMs: 4000, status: 'failed' },
      ]);
      assert.deepEqual(await wake(engine.context('d1'), {}), { status: 'failed', nextInMs: 5000 });
      const [first] = engine.sentTo('WebhookDelivery', 'wake');
      assert.deepEqual([first!.key, first!.input, first!.delayMs], ['d1', { token: 1 }, 5000]);
      await wake(engine.context('d1'), {});
      const timers = engine.sentTo('WebhookDelivery', 'wake');
      assert.equal(timers.length, 2);
      assert.deepEqual(timers[1]!.input, { token: 2 });
      assert.deepEqual(engine.cancelled, [first!.invocationId]);
    });

    it('a timer of an earlier generation does nothing; the current one runs without cancelling itself', async () => {
      const { engine, wake } = setup([
        { next: 'wait', dueInMs: 5000, status: 'failed' },
        { next: 'done', status: 'delivered' },
      ]);
      await wake(engine.context('d2'), {});
      const armed = engine.sentTo('WebhookDelivery', 'wake')[0]!;
      assert.deepEqual(await wake(engine.context('d2'), { token: 0 }), { ignored: 'stale' });
      assert.deepEqual(await wake(engine.context('d2', armed.invocationId), { token: 1 }), { status: 'delivered' });
      assert.deepEqual(engine.cancelled, []);
      assert.equal(engine.state.get('d2')!.size, 0, 'a finished delivery keeps no state');
    });

    it('a database that stays away arms nothing (the wake index row stays for the housekeeping loop)', async () => {
      const engine = new FakeEngine();
      const wake = handlerOf<{ token?: number }, WakeResult>(createWebhookDelivery({ deliverWebhook: failing('connection refused') }), 'wake');
      assert.deepEqual(await wake(engine.context('d3'), {}), { error: 'connection refused' });
      assert.equal(engine.sent.length, 0);
      assert.equal(engine.steps[0]!.attempts, RETRY.database.maxRetryAttempts);
    });
  });

  describe('Housekeeping: the one durable loop', () => {
    const activities = (over: Partial<HousekeepingActivities> = {}): HousekeepingActivities => ({
      purgeIdempotencyKeys: async () => 7,
      overdueOrganizations: async () => [],
      drainEventOutbox: async () => {},
      announcePastDueTransitions: async () => 0,
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

    it('due-work wakes the BusinessClock of every organisation with overdue rows and drains the outbox, every minute', async () => {
      const engine = new FakeEngine();
      let drained = 0;
      const h = handlers(activities({ overdueOrganizations: async (grace) => (grace === MINUTE_MS ? ['org-a', 'org-b'] : []), drainEventOutbox: async () => void drained++ }));
      assert.deepEqual(await h.start(engine.context('due-work')), { ran: true, count: 2, nextRunAt: engine.now + MINUTE_MS });
      assert.deepEqual(engine.sentTo('BusinessClock', 'wakeDue').map((c) => c.key), ['org-a', 'org-b']);
      assert.equal(drained, 1);
      const [timer] = engine.sentTo('Housekeeping', 'wake');
      assert.deepEqual(await h.wake(engine.context('due-work', timer!.invocationId), { gen: 0 }), { ran: false, reason: 'stale_wake', nextRunAt: engine.now + MINUTE_MS });
    });

    it('the armed wake-up of a job stored under its former name (lost-work) clears that key and arms nothing', async () => {
      const engine = new FakeEngine();
      const h = handlers(activities({ overdueOrganizations: async () => ['org-a'] }));
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

  describe('BusinessClock: pokes what is due, by the handler each row names', () => {
    it('pages through the due rows and sends each its own handler', async () => {
      const rows: WakeRef[] = Array.from({ length: 501 }, (_, i) => ({ service: 'InvoiceMail', handler: 'deliver', key: `inv-${i}`, dueAt: `2026-01-01 00:00:${String(i % 60).padStart(2, '0')}+00` }));
      rows[3] = { service: 'WebhookDelivery', handler: 'wake', key: 'del-3', dueAt: rows[3]!.dueAt };
      const asked: (WakeRef | null)[] = [];
      const engine = new FakeEngine();
      const wakeDue = handlerOf<null, { woken: number }>(
        createBusinessClock({
          dueWakeUps: async (_org, after, limit) => {
            asked.push(after);
            const from = after ? rows.indexOf(rows.find((r) => r.key === after.key)!) + 1 : 0;
            return rows.slice(from, from + limit);
          },
        }),
        'wakeDue',
      );
      assert.deepEqual(await wakeDue(engine.context('org-1')), { woken: 501 });
      assert.deepEqual(asked.map((a) => a?.key ?? null), [null, 'inv-499']);
      assert.equal(engine.sentTo('InvoiceMail', 'deliver').length, 500);
      assert.deepEqual(engine.sentTo('WebhookDelivery', 'wake').map((c) => [c.key, c.input]), [['del-3', {}]]);
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
        }),
        'deliver',
      );
      assert.deepEqual(await deliver(engine.context('inv-2')), { status: 'parked' });
      assert.equal(mailed, 1);
      assert.deepEqual(parked, [WORK.invoiceMail('inv-2')]);
    });

    it('a finished issue that asked for mail hands the invoice to its InvoiceMail object', async () => {
      const engine = new FakeEngine();
      const finish = handlerOf<null, { finished: boolean }>(
        createInvoiceIssue({ finishInvoiceIssue: async () => ({ finished: true, mail: true, dunning: null }), parkWork: async () => true }),
        'finish',
      );
      assert.deepEqual(await finish(engine.context('inv-3')), { finished: true });
      assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key]), [['InvoiceMail', 'deliver', 'inv-3']]);
    });

    it('an issue finished with its due date already passed starts its dunning at once', async () => {
      const engine = new FakeEngine();
      const finish = handlerOf<null, { finished: boolean }>(
        createInvoiceIssue({ finishInvoiceIssue: async () => ({ finished: true, mail: false, dunning: 'org-1:inv-4' }), parkWork: async () => true }),
        'finish',
      );
      await finish(engine.context('inv-4'));
      assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key]), [['Dunning', 'wake', 'org-1:inv-4']]);
    });
  });

  describe('WebhookEvents', () => {
    it('hands each delivery still pending after its first attempt to its own object', async () => {
      const engine = new FakeEngine();
      const route = handlerOf<unknown, { pending: number }>(createWebhookEvents({ fanOutAndDeliver: async () => ['d-1', 'd-2'] }), 'route');
      assert.deepEqual(await route(engine.context('unused'), { eventId: 'e', organizationId: 'o' }), { pending: 2 });
      assert.deepEqual(engine.sentTo('WebhookDelivery', 'wake').map((c) => c.key), ['d-1', 'd-2']);
      await assert.rejects(route(engine.context('unused'), {}), (err) => err instanceof restate.TerminalError);
    });
  });
});
