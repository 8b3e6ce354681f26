import assert from 'node:assert/strict';
import { createDunning, type DunningActivities, type DunningResult } from '../../workflows/dunning.ts';
import type { DunningStep } from '../../services/reminders/take-due-dunning-step.ts';
import { RETRY } from '../../workflows/shared/durable.ts';
import { FakeEngine, handlerOf } from '../helpers/fake-durable-context.ts';

/** The Dunning object's loop against fake activities: which steps it runs for each decision, and when it parks. */
describe('workflow logic: Dunning', () => {
  const ORG = '01900000-0000-7000-8000-000000000001';
  const INVOICE = '01900000-0000-7000-8000-000000000002';
  const key = `${ORG}:${INVOICE}`;
  const R1 = 'rem-1';

  function fakes(steps: DunningStep[], over: Partial<DunningActivities> = {}) {
    const calls: string[] = [];
    const activities: DunningActivities = {
      takeDunningStep: async () => {
        calls.push('take');
        return steps.shift() ?? { kind: 'done' };
      },
      renderReminder: async (id) => (calls.push(`render ${id}`), { status: 'rendered' }),
      deliverReminder: async (id) => (calls.push(`deliver ${id}`), { kind: 'sent', channel: 'email', messageId: 'm' }),
      recordDelivery: async (_kind, id, attempt) => (calls.push(`record ${id} ${attempt.kind}`), { delivery: 'done' }),
      giveUpDelivery: async (_kind, id, reason) => (calls.push(`give-up ${id} ${reason}`), { delivery: 'none' }),
      parkWork: async (target, error) => (calls.push(`park ${target.service} ${target.key} ${error}`), true),
      // The claim release each wake ends with: nothing to hand on unless a test says so.
      releaseWake: async () => null,
      ...over,
    };
    return { calls, wake: handlerOf<{ claim?: number } | null, DunningResult>(createDunning(activities), 'wake') };
  }

  it('renders, delivers and records a taken reminder, then waits for the next step', async () => {
    const { calls, wake } = fakes([
      { kind: 'deliver', reminderId: R1, delivery: 'pending', documented: false },
      { kind: 'wait', date: '2026-03-12' },
    ]);
    const engine = new FakeEngine();
    assert.deepEqual(await wake(engine.context(key)), { steps: 1, ended: 'wait', next: '2026-03-12' });
    assert.deepEqual(calls, ['take', `render ${R1}`, `deliver ${R1}`, `record ${R1} sent`, 'take']);
    assert.deepEqual(engine.steps.map((s) => s.name), ['take-step-0', 'render-0', 'deliver-0', 'record-0', 'take-step-1', 'release']);
  });

  it('a reminder already rendered is only delivered; one without a channel is only rendered', async () => {
    const { calls, wake } = fakes([
      { kind: 'deliver', reminderId: R1, delivery: 'pending', documented: true },
      { kind: 'deliver', reminderId: 'r2', delivery: 'none', documented: false },
    ]);
    assert.deepEqual(await wake(new FakeEngine().context(key)), { steps: 2, ended: 'done' });
    assert.deepEqual(calls, ['take', `deliver ${R1}`, `record ${R1} sent`, 'take', 'render r2', 'take']);
  });

  it('a delivery whose retries run out is recorded as undeliverable, and the loop goes on', async () => {
    const engine = new FakeEngine();
    const { calls, wake } = fakes([{ kind: 'deliver', reminderId: R1, delivery: 'pending', documented: true }], {
      deliverReminder: () => Promise.reject(new Error('421 try later')),
    });
    assert.deepEqual(await wake(engine.context(key)), { steps: 1, ended: 'done' });
    assert.deepEqual(calls, ['take', `give-up ${R1} 421 try later`, 'take']);
    assert.equal(engine.steps.find((s) => s.name === 'deliver-0')!.attempts, RETRY.mail.maxRetryAttempts);
  });

  it('parks the invoice when rendering or recording stays down, never delivering twice', async () => {
    const renderDown = fakes([{ kind: 'deliver', reminderId: R1, delivery: 'pending', documented: false }], {
      renderReminder: () => Promise.reject(new Error('browser crashed')),
    });
    assert.deepEqual(await renderDown.wake(new FakeEngine().context(key)), { steps: 0, ended: 'parked' });
    assert.deepEqual(renderDown.calls, ['take', `park Dunning ${key} browser crashed`]);

    const recordDown = fakes([{ kind: 'deliver', reminderId: R1, delivery: 'pending', documented: true }], {
      recordDelivery: () => Promise.reject(new Error('database down')),
    });
    assert.deepEqual(await recordDown.wake(new FakeEngine().context(key)), { steps: 0, ended: 'parked' });
    assert.deepEqual(recordDown.calls, ['take', `deliver ${R1}`, `park Dunning ${key} database down`]);
  });

  it("hands a collected invoice's case and a sibling's step to the organisation's shard scheduler; a noted step just goes on", async () => {
    const engine = new FakeEngine();
    const { calls, wake } = fakes([
      { kind: 'noted', daysBefore: 30, date: '2026-03-02' },
      { kind: 'sibling', invoiceId: 'inv-0' },
      { kind: 'collected', caseId: 'case-1' },
    ]);
    assert.deepEqual(await wake(engine.context(key)), { steps: 3, ended: 'done' });
    assert.deepEqual(calls, ['take', 'take', 'take', 'take']);
    // The sibling's row and the case's row are due now; the scheduler claims them (one invocation each, at most).
    assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key, c.input]), [
      ['WakeScheduler', 'nudge', '1', { atMs: null }],
      ['WakeScheduler', 'nudge', '1', { atMs: null }],
    ]);
  });

  it('leaves the rest of a long catch-up to a fresh invocation: its release, finding the row still due, nudges the scheduler', async () => {
    const engine = new FakeEngine();
    const { wake } = fakes(Array.from({ length: 40 }, () => ({ kind: 'noted', daysBefore: 30, date: '2026-03-02' })), {
      releaseWake: async (t, token) => (t.service === 'Dunning' && t.key === key && token === 9 ? { shard: 1, nudgeAtMs: 1_000 } : null),
    });
    assert.deepEqual(await wake(engine.context(key), { claim: 9 }), { steps: 16, ended: 'continued' });
    assert.deepEqual(engine.sent.map((c) => [c.service, c.handler, c.key, c.input]), [['WakeScheduler', 'nudge', '1', { atMs: 1_000 }]]);
  });

  it('parks when taking a step stays down', async () => {
    const { calls, wake } = fakes([], { takeDunningStep: () => Promise.reject(new Error('database down')) });
    assert.deepEqual(await wake(new FakeEngine().context(key)), { steps: 0, ended: 'parked' });
    assert.deepEqual(calls, [`park Dunning ${key} database down`]);
  });
});
