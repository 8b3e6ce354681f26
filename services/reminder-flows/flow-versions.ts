import type {
  FlowActor,
  ReminderFlowGraph,
  ReminderFlowListQuery,
  ReminderFlowSummary,
  ReminderFlowVersion,
} from '../../contracts/reminder-flows.ts';
import type { Keyring } from '../shared/crypto.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { ACTIVE_FLOW_STATE, FLOW_LIFECYCLE, FLOW_TRANSITIONS, INITIAL_FLOW_STATE, transitionTarget, type FlowState, type FlowTransition } from './flow-lifecycle.ts';

/**
 * Reminder-flow versions of one organisation (docs/reminder-flows.md, "Versions, states and four-eyes"): create (the
 * key's next version), read, list per key, and the guarded state changes of flow-lifecycle.ts. Creation and activation
 * of one organisation are serialised by a transaction-scoped advisory lock, so version numbers never collide and two
 * activations never meet at the one-active-version index.
 */

interface VersionRow {
  id: string;
  flow_key: string;
  version: number;
  name: string;
  graph: ReminderFlowGraph;
  state: FlowState;
  created_by_type: FlowActor['type'];
  created_by_id: string;
  approved_by_type: FlowActor['type'] | null;
  approved_by_id: string | null;
  activated_by_type: FlowActor['type'] | null;
  activated_by_id: string | null;
  created_at: Date;
  approved_at: Date | null;
  activated_at: Date | null;
}

const actor = (type: FlowActor['type'] | null, id: string | null): FlowActor | null => (type && id ? { type, id } : null);
const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function toView(r: VersionRow): ReminderFlowVersion {
  return {
    key: r.flow_key,
    version: r.version,
    name: r.name,
    graph: r.graph,
    state: r.state,
    createdBy: actor(r.created_by_type, r.created_by_id),
    approvedBy: actor(r.approved_by_type, r.approved_by_id),
    activatedBy: actor(r.activated_by_type, r.activated_by_id),
    createdAt: iso(r.created_at),
    approvedAt: iso(r.approved_at),
    activatedAt: iso(r.activated_at),
  };
}

const notFound = () => new DomainError('reminder_flow_not_found', 'No reminder flow version with that key and version exists.');

async function lockFlows(sql: Queryable, organizationId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`reminder_flows|${organizationId}`}, 0))`;
}

export async function createFlowVersion(
  sql: Queryable,
  organizationId: string,
  by: FlowActor,
  input: { key: string; name: string; graph: ReminderFlowGraph },
): Promise<ReminderFlowVersion> {
  await lockFlows(sql, organizationId);
  const [row] = await sql<VersionRow[]>`
    INSERT INTO reminder_flow_versions (organization_id, id, flow_key, version, name, graph, state, created_by_type, created_by_id)
    SELECT ${organizationId}, ${uuidv7()}, ${input.key}, coalesce(max(version), 0) + 1, ${input.name}, ${sql.json(input.graph)},
           ${INITIAL_FLOW_STATE}, ${by.type}, ${by.id}
    FROM reminder_flow_versions WHERE organization_id = ${organizationId} AND flow_key = ${input.key}
    RETURNING *`;
  return toView(row!);
}

export async function getFlowVersion(sql: Queryable, organizationId: string, key: string, version: number): Promise<ReminderFlowVersion> {
  const [row] = await sql<VersionRow[]>`
    SELECT * FROM reminder_flow_versions WHERE organization_id = ${organizationId} AND flow_key = ${key} AND version = ${version}`;
  if (!row) throw notFound();
  return toView(row);
}

/** One item per key, in key order; keyset on the key. */
export async function listFlows(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: ReminderFlowListQuery,
): Promise<{ items: ReminderFlowSummary[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'reminder_flows', filters: [] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const rows = await sql<{ flow_key: string; name: string; latest_version: number; active_version: number | null }[]>`
    SELECT DISTINCT ON (flow_key) flow_key, name, version AS latest_version,
      (SELECT a.version FROM reminder_flow_versions a
       WHERE a.organization_id = v.organization_id AND a.flow_key = v.flow_key AND a.state IN ${FLOW_LIFECYCLE.in(sql, [ACTIVE_FLOW_STATE])}) AS active_version
    FROM reminder_flow_versions v
    WHERE organization_id = ${organizationId} ${after !== null ? sql`AND flow_key > ${after}` : sql``}
    ORDER BY flow_key, version DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.flow_key]));
  return {
    items: items.map((r) => ({ key: r.flow_key, name: r.name, latestVersion: r.latest_version, activeVersion: r.active_version })),
    nextCursor,
  };
}

async function lockVersion(sql: Queryable, organizationId: string, key: string, version: number): Promise<VersionRow> {
  const [row] = await sql<VersionRow[]>`
    SELECT * FROM reminder_flow_versions
    WHERE organization_id = ${organizationId} AND flow_key = ${key} AND version = ${version}
    FOR UPDATE`;
  if (!row) throw notFound();
  return row;
}

function refuse(row: VersionRow, transition: FlowTransition): DomainError {
  const from = FLOW_TRANSITIONS[transition].from.join(' or ');
  return new DomainError(
    'invalid_transition',
    `Version ${row.version} of ${row.flow_key} is ${row.state}; ${transition === 'approve' ? 'only a draft can be approved' : `it must be ${from} to ${transition}`}.`,
  );
}

/** Four-eyes: a draft becomes approved by an actor other than its creator. */
export async function approveFlowVersion(
  sql: Queryable,
  organizationId: string,
  by: FlowActor,
  key: string,
  version: number,
): Promise<ReminderFlowVersion> {
  const row = await lockVersion(sql, organizationId, key, version);
  if (!transitionTarget(row.state, 'approve')) throw refuse(row, 'approve');
  if (row.created_by_type === by.type && row.created_by_id === by.id) {
    throw new DomainError('approver_is_creator', 'A version must be approved by another key than the one that created it.');
  }
  const { row: updated } = await FLOW_LIFECYCLE.transition(sql, row.id, 'approve', {
    organizationId,
    set: sql`approved_by_type = ${by.type}, approved_by_id = ${by.id}, approved_at = now()`,
    returning: '*',
    refused: () => refuse(row, 'approve'),
  });
  return toView(updated as unknown as VersionRow);
}

/**
 * `{active: true}`: approved or inactive → active, and the organisation's active version (any key) → inactive in the
 * same transaction. `{active: false}`: active → inactive.
 */
export async function setFlowVersionActive(
  sql: Queryable,
  organizationId: string,
  by: FlowActor,
  key: string,
  version: number,
  active: boolean,
): Promise<ReminderFlowVersion> {
  await lockFlows(sql, organizationId);
  const row = await lockVersion(sql, organizationId, key, version);
  const transition: FlowTransition = active ? 'activate' : 'deactivate';
  if (!transitionTarget(row.state, transition)) throw refuse(row, transition);
  if (active) {
    // The organisation's active version, of any key (at most one: the partial unique index), found under the lock.
    const [current] = await sql<{ id: string }[]>`
      SELECT id FROM reminder_flow_versions
      WHERE organization_id = ${organizationId} AND state IN ${FLOW_LIFECYCLE.in(sql, FLOW_TRANSITIONS.supersede.from)}`;
    if (current) await FLOW_LIFECYCLE.transition(sql, current.id, 'supersede', { organizationId });
  }
  const { row: updated } = await FLOW_LIFECYCLE.transition(sql, row.id, transition, {
    organizationId,
    set: active ? sql`activated_by_type = ${by.type}, activated_by_id = ${by.id}, activated_at = now()` : undefined,
    returning: '*',
    refused: () => refuse(row, transition),
  });
  return toView(updated as unknown as VersionRow);
}
