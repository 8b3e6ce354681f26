import assert from 'node:assert/strict';
import { createCase, type CaseActivities, type CaseResult } from '../../workflows/case.ts';
import type { CaseStep } from '../../services/cases/take-due-case-step.ts';
import { FakeEngine, handlerOf } from '../helpers/fake-durable-context.ts';

/** The Case object's loop against fake activities: which steps it runs for each decision, and when it parks. */
describe('workflow logic: Case', () => {
  const ORG = '01900000-0000-7000-8000-000000000001';
  const CASE = '01900000-0000-7000-8000-000000000002';
  const key = `${ORG}:${CASE}`;

  function fakes(steps: CaseStep[], over: Partial<CaseActivities> = {}) {
    const calls: string[] = [];
    const activities: CaseActivities = {
      takeCaseStep: async () => {
        calls.push('take');
        return steps.shift() ?? { kind: 'done', state: 'OVERDRAGET' };
      },
      renderCasePaakrav: async (_o, _c, sentOn) => (calls.push(`render ${sentOn}`), { sha256: 'ab'.repeat(32) }),
      deliverCasePaakrav: async () => (calls.push('deliver'), { kind: 'sent', channel: 'email', reference: 'm' }),
      recordDelivery: async (_kind, { sentOn }) => (calls.push(`record-paakrav ${sentOn}`), { recorded: true }),
      handOverCase: async (_o, _c, on) => (calls.push(`hand-over ${on}`), { reference: 'p-1' }),
      recordCaseHandOver: async () => (calls.push('record-hand-over'), { recorded: true }),
      parkWork: async (target, error) => (calls.push(`park ${target.service} ${target.key} ${error}`), true),
      // The claim release each wake ends with: nothing to hand on unless a test says so.
      releaseWake: async () => null,
      ...over,
    };
    return { calls, wake: handlerOf<null, CaseResult>(createCase(activities), 'wake') };
  }

  it('sends its own påkrav (render, deliver, record), then waits for the hand-over day', async () => {
    const { calls, wake } = fakes([{ kind: 'send_paakrav', sentOn: '2026-03-02' }, { kind: 'wait', date: '2026-03-13' }]);
    const result = await wake(new FakeEngine().context(key));
    assert.deepEqual(result, { steps: 1, ended: 'wait', next: '2026-03-13' });
    assert.deepEqual(calls, ['take', 'render 2026-03-02', 'deliver', 'record-paakrav 2026-03-02', 'take']);
  });

  it('takes over the demand letter, then hands over on the day and records it', async () => {
    const { calls, wake } = fakes([{ kind: 'paakrav_recorded', sentOn: '2026-02-01' }, { kind: 'hand_over', handedOverOn: '2026-02-12' }]);
    assert.deepEqual(await wake(new FakeEngine().context(key)), { steps: 2, ended: 'done' });
    assert.deepEqual(calls, ['take', 'take', 'hand-over 2026-02-12', 'record-hand-over', 'take']);
  });

  it('a case that no longer waits for the hand-over records nothing', async () => {
    const { calls, wake } = fakes([{ kind: 'hand_over', handedOverOn: '2026-02-12' }], { handOverCase: async () => ({ reference: null }) });
    await wake(new FakeEngine().context(key));
    assert.deepEqual(calls, ['take', 'take']);
  });

  it('parks the case when the påkrav is refused for good, and when the partner stays unreachable', async () => {
    const refused = fakes([{ kind: 'send_paakrav', sentOn: '2026-03-02' }], {
      deliverCasePaakrav: async () => ({ kind: 'refused', code: 'debtor_unreachable', reason: 'no e-mail, no address' }),
    });
    assert.deepEqual(await refused.wake(new FakeEngine().context(key)), { steps: 0, ended: 'parked' });
    assert.equal(refused.calls.at(-1), `park Case ${key} påkrav not delivered: debtor_unreachable: no e-mail, no address`);

    const engine = new FakeEngine();
    const down = fakes([{ kind: 'hand_over', handedOverOn: '2026-02-12' }], { handOverCase: async () => { throw new Error('connect ECONNREFUSED'); } });
    assert.deepEqual(await down.wake(engine.context(key)), { steps: 0, ended: 'parked' });
    assert.ok(engine.steps.some((s) => s.name === 'hand-over-0' && s.outcome === 'failed' && s.attempts > 1));
    assert.ok(!down.calls.includes('record-hand-over'));
  });
});
