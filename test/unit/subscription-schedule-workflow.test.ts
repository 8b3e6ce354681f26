import assert from 'node:assert/strict';
import {
  createSubscriptionSchedule,
  type SubscriptionScheduleActivities,
  type SubscriptionScheduleResult,
} from '../../workflows/subscription-schedule.ts';
import type { ScheduledRun } from '../../services/subscriptions/run-period.ts';
import { RETRY } from '../../workflows/shared/durable.ts';
import { FakeEngine, handlerOf } from '../helpers/fake-durable-context.ts';

/** The SubscriptionSchedule object's loop against fake activities: catch-up, hand-offs and parking. */
describe('workflow logic: SubscriptionSchedule', () => {
  const ORG = '01900000-0000-7000-8000-000000000001';
  const SUB = '01900000-0000-7000-8000-000000000003';
  const key = `${ORG}:${SUB}`;
  const reserved = (n: number): ScheduledRun => ({ kind: 'reserved', invoiceId: `inv-${n}`, periodStart: `2026-0${n}-01`, periodEnd: `2026-0${n}-28` });

  function fakes(runs: ScheduledRun[], over: Partial<SubscriptionScheduleActivities> = {}) {
    const calls: string[] = [];
    const activities: SubscriptionScheduleActivities = {
      runSubscriptionPeriod: async () => {
        calls.push('run');
        return runs.shift() ?? { kind: 'idle', status: 'paused' };
      },
      finishInvoiceIssue: async (id) => (calls.push(`issue ${id}`), { finished: true, mail: false, dunning: null }),
      parkWork: async (target, error) => (calls.push(`park ${target.service} ${target.key} ${error}`), true),
      // The claim release each wake ends with: nothing to hand on unless a test says so.
      releaseWake: async () => null,
      ...over,
    };
    return { calls, wake: handlerOf<{ claim?: number } | null, SubscriptionScheduleResult>(createSubscriptionSchedule(activities), 'wake') };
  }

  it('runs and issues every due period, oldest first, then waits for the next one', async () => {
    const engine = new FakeEngine();
    const { calls, wake } = fakes([reserved(1), reserved(2), { kind: 'wait', date: '2026-03-01' }]);
    assert.deepEqual(await wake(engine.context(key)), { periods: 2, ended: 'wait', next: '2026-03-01' });
    assert.deepEqual(calls, ['run', 'issue inv-1', 'run', 'issue inv-2', 'run']);
    assert.deepEqual(engine.steps.map((s) => s.name), ['run-0', 'issue-0', 'run-1', 'issue-1', 'run-2', 'release']);
    assert.deepEqual(engine.sent, []);
  });

  it('an idle subscription ends the wake', async () => {
    const { wake } = fakes([{ kind: 'idle', status: 'cancelled' }]);
    assert.deepEqual(await wake(new FakeEngine().context(key)), { periods: 0, ended: 'idle' });
  });

  it("hands an issued invoice's mail and a past-due one's dunning to the organisation's shard scheduler", async () => {
    const engine = new FakeEngine();
    const { wake } = fakes([reserved(1)], {
      finishInvoiceIssue: async (id) => ({ finished: true, mail: true, dunning: `${ORG}:${id}` }),
    });
    assert.deepEqual(await wake(engine.context(key)), { periods: 1, ended: 'idle' });
    assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key, c.input]), [['WakeScheduler', 'nudge', '1', { atMs: null }]]);
  });

  it('an issue that fails for good leaves the period to its InvoiceIssue object and runs the next one', async () => {
    const engine = new FakeEngine();
    const { calls, wake } = fakes([reserved(1), reserved(2)], {
      finishInvoiceIssue: async (id) => {
        if (id === 'inv-1') throw new Error('renderer down');
        calls.push(`issue ${id}`);
        return { finished: true, mail: false, dunning: null };
      },
    });
    assert.deepEqual(await wake(engine.context(key)), { periods: 2, ended: 'idle' });
    assert.deepEqual(calls, ['run', 'run', 'issue inv-2', 'run']);
    assert.equal(engine.steps.find((s) => s.name === 'issue-0')!.attempts, RETRY.finishIssue.maxRetryAttempts);
    assert.deepEqual(engine.sent, []);
  });

  it('parks the schedule when a run stays down', async () => {
    const { calls, wake } = fakes([reserved(1)], {
      runSubscriptionPeriod: () => Promise.reject(new Error('database down')),
    });
    assert.deepEqual(await wake(new FakeEngine().context(key)), { periods: 0, ended: 'parked' });
    assert.deepEqual(calls, [`park SubscriptionSchedule ${key} database down`]);
  });

  it('leaves the rest of a long catch-up to a fresh invocation: its release, finding the row still due, nudges the scheduler', async () => {
    const engine = new FakeEngine();
    const { wake } = fakes(Array.from({ length: 20 }, (_, n) => reserved((n % 9) + 1)), {
      finishInvoiceIssue: async () => ({ finished: true, mail: false, dunning: null }),
      releaseWake: async (t, token) => (t.key === key && token === 4 ? { shard: 1, nudgeAtMs: 2_000 } : null),
    });
    assert.deepEqual(await wake(engine.context(key), { claim: 4 }), { periods: 12, ended: 'continued' });
    assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key, c.input]), [['WakeScheduler', 'nudge', '1', { atMs: 2_000 }]]);
  });
});
