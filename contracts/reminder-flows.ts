import { Type, type Static } from 'typebox';
import { DateTimeString, ListQuery, Nullable, Uuid } from './common.ts';

/**
 * Reminder flows (docs/reminder-flows.md). A flow is a key with
 * numbered versions; each version carries a graph of dunning steps. The create body takes `graph` as any JSON value
 * and the service accepts only a ReminderFlowGraph, judged by services/reminder-flows/validate-flow-graph.ts
 * (422 `invalid_flow_graph`, one detail per problem). The schemas below publish the format in the OpenAPI document.
 */

export const FLOW_KEY_PATTERN = '^[A-Z0-9_]{3,60}$';

export const FlowAction = Type.Union([Type.Literal('payment_reminder'), Type.Literal('reminder'), Type.Literal('collections')], {
  description:
    '`payment_reminder`: the free-of-charge reminder before the fee-bearing ones; `reminder`: a fee-bearing reminder ' +
    '(the third one is the demand letter); `collections`: hand the invoice to debt collection.',
});
export const FlowChannel = Type.Union([Type.Literal('email'), Type.Literal('letter'), Type.Literal('email_or_letter')], {
  description: '`email_or_letter`: by e-mail, by letter when the customer has no e-mail address.',
});
export const FlowCustomerType = Type.Union([Type.Literal('person'), Type.Literal('company')]);

export const ReminderFlowStep = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 40, description: 'Unique within the graph' }),
    action: FlowAction,
    daysAfterDue: Type.Integer({ minimum: 1, maximum: 365, description: 'Days after the due date; strictly increasing along the steps' }),
    fee: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, maximum: 10000 }), Type.Literal('statutory')], {
        description: 'Reminder steps only: the fee in øre, or `statutory` (the cap, 10000 øre; the default)',
      }),
    ),
    channel: Type.Optional(FlowChannel),
    when: Type.Optional(
      Type.Object(
        { customerType: Type.Optional(FlowCustomerType) },
        { additionalProperties: false, description: 'The step applies only to customers of this type; without it, to every customer' },
      ),
    ),
  },
  { additionalProperties: false, title: 'ReminderFlowStep' },
);
export type ReminderFlowStep = Static<typeof ReminderFlowStep>;

export const ReminderFlowGraph = Type.Object(
  { steps: Type.Array(ReminderFlowStep, { minItems: 1, maxItems: 10 }) },
  {
    additionalProperties: false,
    title: 'ReminderFlowGraph',
    description:
      'The dunning steps of a flow version, in order. Rules beyond the shape (each is 422 `invalid_flow_graph` at its ' +
      'JSON pointer): ids unique; `daysAfterDue` strictly increasing; `fee` on reminder steps only; per customer type ' +
      'at most one `payment_reminder`, before any `reminder`, and at most 3 `reminder` steps; `collections` at most ' +
      'once, last, and at least 11 days after the last reminder step. Read back with the defaults filled in ' +
      '(`fee: "statutory"` on reminders, `channel: "email_or_letter"`).',
  },
);
export type ReminderFlowGraph = Static<typeof ReminderFlowGraph>;

export const ReminderFlowCreate = Type.Object(
  {
    key: Type.String({ pattern: FLOW_KEY_PATTERN, description: '3..60 capital letters, digits or underscores' }),
    name: Type.String({ minLength: 1, maxLength: 120 }),
    graph: Type.Unknown({
      description:
        'Any JSON value by schema; the service accepts only a ReminderFlowGraph (components.schemas.ReminderFlowGraph) ' +
        'and answers anything else with 422 `invalid_flow_graph`, one detail per problem.',
    }),
  },
  { additionalProperties: false, title: 'ReminderFlowCreate' },
);
export type ReminderFlowCreate = Static<typeof ReminderFlowCreate>;

export const FlowActor = Type.Object(
  {
    type: Type.Union([Type.Literal('api_key'), Type.Literal('member')]),
    id: Uuid,
  },
  { title: 'ReminderFlowActor', description: 'Who acted: an API key (its key id, as the operator command printed it) or a member' },
);
export type FlowActor = Static<typeof FlowActor>;

export const FlowState = Type.Union([Type.Literal('draft'), Type.Literal('approved'), Type.Literal('active'), Type.Literal('inactive')]);

export const ReminderFlowVersion = Type.Object(
  {
    key: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    graph: ReminderFlowGraph,
    state: FlowState,
    createdBy: Nullable(FlowActor),
    approvedBy: Nullable(FlowActor),
    activatedBy: Nullable(FlowActor),
    createdAt: Nullable(DateTimeString),
    approvedAt: Nullable(DateTimeString),
    activatedAt: Nullable(DateTimeString),
  },
  {
    title: 'ReminderFlowVersion',
    description:
      'One version of a flow. `createdBy` and `createdAt` are null only for the platform standard (`?standard=true`); ' +
      '`activatedBy`/`activatedAt` are the latest activation (kept when the version becomes inactive).',
  },
);
export type ReminderFlowVersion = Static<typeof ReminderFlowVersion>;

export const ReminderFlowSummary = Type.Object(
  {
    key: Type.String(),
    name: Type.String({ description: 'The latest version’s name' }),
    latestVersion: Type.Integer({ minimum: 1 }),
    activeVersion: Nullable(Type.Integer({ minimum: 1 })),
  },
  { title: 'ReminderFlow', description: 'A flow key with its latest version and the version active now (or null)' },
);
export type ReminderFlowSummary = Static<typeof ReminderFlowSummary>;

export const ReminderFlowListQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
export type ReminderFlowListQuery = Static<typeof ReminderFlowListQuery>;

export const ReminderFlowVersionQuery = Type.Object(
  { standard: Type.Optional(Type.Boolean({ description: '`true` reads the platform standard flow with that key (only `STANDARD`, version 1)' })) },
  { additionalProperties: false },
);

export const ReminderFlowActivate = Type.Object(
  { active: Type.Boolean({ description: '`true`: approved or inactive → active; `false`: active → inactive' }) },
  { additionalProperties: false, title: 'ReminderFlowActivate' },
);
export type ReminderFlowActivate = Static<typeof ReminderFlowActivate>;
