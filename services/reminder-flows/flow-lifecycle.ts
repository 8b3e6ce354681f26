import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The reminder-flow version lifecycle as data (docs/reminder-flows.md, "Versions, states and four-eyes"):
 *
 *   draft → approved (four-eyes) → active ⇄ inactive; activating one version makes the organisation's previously
 *   active version (of any key) inactive.
 *
 * Every state change goes through the kit's guarded UPDATE (`FLOW_LIFECYCLE`, services/shared/lifecycle.ts); a version not in one of a transition's from-states is refused
 * with 422 `invalid_transition`. There is one active version per organisation at most (a partial unique index in
 * the migration backs it).
 */
export const FLOW_STATES = ['draft', 'approved', 'active', 'inactive'] as const;
export type FlowState = (typeof FLOW_STATES)[number];

/** A new version's state (its INSERT). */
export const INITIAL_FLOW_STATE = 'draft' as const satisfies FlowState;

/** The state of the organisation's one version in use. */
export const ACTIVE_FLOW_STATE = 'active' as const satisfies FlowState;

interface Transition {
  from: readonly FlowState[];
  to: FlowState;
}

export const FLOW_TRANSITIONS = {
  /** POST …/approve, by a key other than the creator's. */
  approve: { from: ['draft'], to: 'approved' },
  /** POST …/activate `{active: true}`. */
  activate: { from: ['approved', 'inactive'], to: 'active' },
  /** POST …/activate `{active: false}`. */
  deactivate: { from: ['active'], to: 'inactive' },
  /** The organisation's active version when another version is activated, in the same transaction. */
  supersede: { from: ['active'], to: 'inactive' },
} as const satisfies Record<string, Transition>;

export type FlowTransition = keyof typeof FLOW_TRANSITIONS;

/** The lifecycle in the kit's terms: reminder_flow_versions.state, a table without updated_at. */
export const FLOW_LIFECYCLE = defineLifecycle({
  name: 'reminder-flow version',
  table: 'reminder_flow_versions',
  column: 'state',
  touchColumn: null,
  states: FLOW_STATES,
  transitions: FLOW_TRANSITIONS,
});

/** The state a version moves to, or undefined when the transition does not start from its state. */
export function transitionTarget(state: FlowState, transition: FlowTransition): FlowState | undefined {
  return FLOW_LIFECYCLE.target(state, transition);
}
