import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope } from '../../../../contracts/common.ts';
import {
  ReminderFlowActivate,
  ReminderFlowCreate,
  ReminderFlowListQuery,
  ReminderFlowSummary,
  ReminderFlowVersion,
  ReminderFlowVersionQuery,
  type FlowActor,
} from '../../../../contracts/reminder-flows.ts';
import {
  approveFlowVersion,
  createFlowVersion,
  getFlowVersion,
  listFlows,
  setFlowVersionActive,
} from '../../../reminder-flows/flow-versions.ts';
import { standardFlow } from '../../../reminder-flows/standard-flow.ts';
import { validateFlowGraph } from '../../../reminder-flows/validate-flow-graph.ts';
import { DomainError } from '../../../../services/shared/errors.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const tags = ['Reminder flows'];
const VersionParams = Type.Object(
  {
    flowKey: Type.String({ description: 'The flow key' }),
    version: Type.String({ description: 'The version number (1, 2, …)' }),
  },
  { additionalProperties: false },
);
type VersionParams = { flowKey: string; version: string };

const PLAN_NOTE = 'Needs the `pro` plan: without it 403 `plan_required`, right after authentication, before any other check.';
const GRAPH_NOTE = 'The graph format is the ReminderFlowGraph schema (components.schemas.ReminderFlowGraph; docs/reminder-flows.md).';

/** Who is calling, as a version's `createdBy`/`approvedBy`/`activatedBy`: the API key's id. */
const caller = (req: FastifyRequest): FlowActor => ({ type: 'api_key', id: req.auth.keyId });

/** The path's version as a number; anything but a positive whole number names no version (404, like an unknown one). */
function versionOf(raw: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(raw)) throw new DomainError('reminder_flow_not_found', 'No reminder flow version with that key and version exists.');
  return Number(raw);
}

export function reminderFlowRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;
  const config = { plan: 'pro' as const };

  app.get<{ Querystring: ReminderFlowListQuery }>(
    '/reminder-flows',
    {
      config: { ...config, scope: 'reminders:read' },
      schema: {
        summary: 'List reminder flows, one item per key',
        description: `Each key with its latest version's name, \`latestVersion\` and \`activeVersion\` (null when none of its versions is active), in key order, in cursor pages. ${PLAN_NOTE}`,
        tags,
        querystring: ReminderFlowListQuery,
        response: { 200: ListEnvelope(ReminderFlowSummary) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listFlows(sql, keyring, req.auth.organizationId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Body: ReminderFlowCreate }>(
    '/reminder-flows',
    {
      config: { ...config, scope: 'reminders:write' },
      schema: {
        summary: 'Create a reminder flow version (a draft)',
        description:
          'A new key starts at version 1; an existing key gets its next version. `graph` is any JSON value by schema; the ' +
          'service accepts only a ReminderFlowGraph and answers anything else with 422 `invalid_flow_graph`, one detail per ' +
          'problem at its JSON pointer from the body (`/graph/steps/2/daysAfterDue`). Like a schema violation, that 422 is ' +
          'judged before the Idempotency-Key is used and does not consume it. Answers 201 with `Location: ' +
          '/v1/reminder-flows/{key}/versions/{n}` and the version in `draft`, its graph with the defaults filled in; ' +
          `\`createdBy\` is the calling key. ${GRAPH_NOTE} ${PLAN_NOTE}`,
        tags,
        body: ReminderFlowCreate,
        response: { 201: Envelope(ReminderFlowVersion) },
      },
    },
    async (req, reply) => {
      // The graph's rules are part of validation, like the schema: judged before the key is looked at.
      const graph = validateFlowGraph(req.body.graph);
      const org = req.auth.organizationId;
      const by = caller(req);
      return mutate(deps, req, reply, async (tx) => {
        const view = await createFlowVersion(tx, org, by, { key: req.body.key, name: req.body.name, graph });
        return { status: 201, data: view, location: `/v1/reminder-flows/${view.key}/versions/${view.version}` };
      });
    },
  );

  app.get<{ Params: VersionParams; Querystring: { standard?: boolean } }>(
    '/reminder-flows/:flowKey/versions/:version',
    {
      config: { ...config, scope: 'reminders:read' },
      schema: {
        summary: 'Get a reminder flow version',
        description:
          'The version with its graph, state and audit fields. `standard=true` reads the platform standard flow with that ' +
          'key instead: `STANDARD`, version 1, the statutory default plan (no payment reminder; reminders on days 7, 14 and ' +
          '21 after the due date at the statutory fee, channel `email_or_letter`; no collections step). It is never ' +
          'editable and needs no approval: state `approved`, actors and dates null. An unknown key or version is 404 ' +
          `\`reminder_flow_not_found\`. ${GRAPH_NOTE} ${PLAN_NOTE}`,
        tags,
        params: VersionParams,
        querystring: ReminderFlowVersionQuery,
        response: { 200: Envelope(ReminderFlowVersion) },
      },
    },
    async (req) => {
      const version = versionOf(req.params.version);
      if (req.query.standard === true) {
        const standard = standardFlow(req.params.flowKey, version);
        if (!standard) throw new DomainError('reminder_flow_not_found', 'The platform has no standard flow with that key and version.');
        return { data: standard, meta: {} };
      }
      return { data: await db.read((sql) => getFlowVersion(sql, req.auth.organizationId, req.params.flowKey, version)), meta: {} };
    },
  );

  app.post<{ Params: VersionParams }>(
    '/reminder-flows/:flowKey/versions/:version/approve',
    {
      config: { ...config, scope: 'reminders:write' },
      schema: {
        summary: 'Approve a draft version (four-eyes)',
        description:
          'draft → approved. The approving key must be another than the one that created the version (422 ' +
          '`approver_is_creator`); a version that is not a draft is 422 `invalid_transition`. Answers 200 with the version, ' +
          `\`approvedBy\` the calling key. ${PLAN_NOTE}`,
        tags,
        params: VersionParams,
        response: { 200: Envelope(ReminderFlowVersion) },
      },
    },
    (req, reply) => {
      const version = versionOf(req.params.version);
      return mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await approveFlowVersion(tx, req.auth.organizationId, caller(req), req.params.flowKey, version),
      }));
    },
  );

  app.post<{ Params: VersionParams; Body: ReminderFlowActivate }>(
    '/reminder-flows/:flowKey/versions/:version/activate',
    {
      config: { ...config, scope: 'reminders:write' },
      schema: {
        summary: 'Activate or deactivate a version',
        description:
          '`{active: true}`: approved or inactive → active, and the organisation’s previously active version (of any key) ' +
          'becomes inactive in the same transaction: one version is active per organisation at most. `{active: false}`: ' +
          'active → inactive. Anything else is 422 `invalid_transition`. Invoices issued while a version is active are ' +
          `pinned to it; later activations do not move them (docs/reminder-flows.md). ${PLAN_NOTE}`,
        tags,
        params: VersionParams,
        body: ReminderFlowActivate,
        response: { 200: Envelope(ReminderFlowVersion) },
      },
    },
    (req, reply) => {
      const version = versionOf(req.params.version);
      return mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await setFlowVersionActive(tx, req.auth.organizationId, caller(req), req.params.flowKey, version, req.body.active),
      }));
    },
  );
}
