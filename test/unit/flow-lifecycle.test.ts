import assert from 'node:assert/strict';
import { FLOW_STATES, FLOW_TRANSITIONS, transitionTarget, type FlowState, type FlowTransition } from '../../services/reminder-flows/flow-lifecycle.ts';

describe('reminder-flow version lifecycle', () => {
  // Every (state, transition) pair and where it leads; undefined: 422 invalid_transition.
  const table: [FlowState, FlowTransition, FlowState | undefined][] = [
    ['draft', 'approve', 'approved'],
    ['approved', 'approve', undefined],
    ['active', 'approve', undefined],
    ['inactive', 'approve', undefined],
    ['draft', 'activate', undefined],
    ['approved', 'activate', 'active'],
    ['active', 'activate', undefined],
    ['inactive', 'activate', 'active'],
    ['draft', 'deactivate', undefined],
    ['approved', 'deactivate', undefined],
    ['active', 'deactivate', 'inactive'],
    ['inactive', 'deactivate', undefined],
    ['draft', 'supersede', undefined],
    ['approved', 'supersede', undefined],
    ['active', 'supersede', 'inactive'],
    ['inactive', 'supersede', undefined],
  ];

  it('covers every state and transition', () => {
    assert.equal(table.length, FLOW_STATES.length * Object.keys(FLOW_TRANSITIONS).length);
  });

  for (const [state, transition, to] of table) {
    it(`${transition} from ${state} → ${to ?? 'refused'}`, () => {
      assert.equal(transitionTarget(state, transition), to);
    });
  }
});
