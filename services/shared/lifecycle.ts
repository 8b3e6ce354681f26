import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from './db.ts';
import { DomainError } from './errors.ts';

/**
 * The lifecycle kit: one way to write down a status column as data and to change it.
 *
 * A lifecycle names its table and column, the states the column may hold (the same list as the column's CHECK in
 * its migration: test/unit/lifecycles.test.ts holds every registered lifecycle to the migrated database), and its
 * transitions, each with the states it may start from. `transition()` is the guarded UPDATE every use case changing
 * that column goes through:
 *
 *   UPDATE <table> SET <column> = <to>[, updated_at = now()][, <set>]
 *   WHERE organization_id = $org AND id = $id AND <column> IN (<from-states>)
 *   RETURNING <column>, the state it had, <returning>
 *
 * so a state is never overwritten by a write that read it earlier, and never silently left as it was: a row that is
 * not (or no longer) in a from-state, or does not exist, is refused with one error, `TransitionRefused` (422
 * `invalid_transition`), unless the use case names its own (`refused`). A transition may also write what it means
 * (events, timeline entries) through the lifecycle's `onTransition`, in the same transaction.
 *
 * State lists are spliced into statements as literals built only from the lifecycle's own constants (`inList`),
 * never bound as parameters, so partial indexes over a list of states stay usable in generic plans.
 */

export type SqlFragment = PendingQuery<Row[]>;

/** A row's key: a uuid, or (for a table keyed by a token's hash) bytes. */
export type RowKey = string | Buffer;

export interface TransitionDef<S extends string> {
  readonly from: readonly S[];
  readonly to: S;
  /**
   * The transition also starts from no state yet: a nullable column whose NULL means "not decided" (a mail's outcome
   * before the mail went out). The guard then reads `(<column> IN (<from>) OR <column> IS NULL)`.
   */
  readonly fromUnset?: boolean;
}

/** What a transition did, as the lifecycle's `onTransition` hook sees it (after the UPDATE, in the same transaction). */
export interface Moved<S extends string, T> {
  readonly organizationId: string | undefined;
  readonly id: RowKey;
  readonly transition: keyof T & string;
  /** The state before the change: only when the transition was asked with `readFrom`. */
  readonly from: S | undefined;
  readonly to: S;
  /** The extra columns asked for with `returning`. */
  readonly row: Record<string, unknown>;
}

export interface LifecycleDef<S extends string, T extends Record<string, TransitionDef<S>>, W = undefined> {
  /** What the rows are, for messages: 'invoice', 'webhook delivery'. */
  readonly name: string;
  readonly table: string;
  readonly column: string;
  readonly states: readonly S[];
  readonly transitions: T;
  /** The tenant column, or null for a table keyed by its id alone. Default `organization_id`. */
  readonly tenantColumn?: string | null;
  /** The key column. Default `id`. */
  readonly idColumn?: string;
  /** A column set to now() with every transition, or null. Default `updated_at`. */
  readonly touchColumn?: string | null;
  /** What the column's values are called in messages: 'status' or 'state' (the default). */
  readonly stateNoun?: 'status' | 'state';
  /** Columns every transition returns (besides each call's own `returning`): what `onTransition` needs of the row. */
  readonly returning?: string;
  /** Every transition reads the state it left (as the call's `readFrom`): for an `onTransition` that needs it. */
  readonly readFrom?: boolean;
  /**
   * What every transition writes besides the row (its events, a timeline entry), run after the guarded UPDATE on
   * the same connection, so in the caller's transaction; its result comes back as the transition's `written`.
   */
  readonly onTransition?: (sql: Queryable, moved: Moved<S, T>) => Promise<W>;
}

/** The one error of a wrong transition: 422 `invalid_transition`, naming the row's kind, its state and the transition. */
export class TransitionRefused extends DomainError {
  readonly lifecycle: string;
  readonly transition: string;
  readonly state: string | undefined;

  constructor(lifecycle: string, transition: string, state: string | undefined, from: readonly string[]) {
    super(
      'invalid_transition',
      state === undefined
        ? `The ${lifecycle} cannot be moved (${transition}): it does not exist or is not in ${from.join(' or ')}.`
        : `The ${lifecycle} is ${state}: ${transition} needs ${from.join(' or ')}.`,
    );
    this.lifecycle = lifecycle;
    this.transition = transition;
    this.state = state;
  }
}

export interface TransitionResult<S extends string, W = undefined> {
  /** The state before the change, read in the same statement: only with `readFrom`. */
  from: S | undefined;
  to: S;
  /** The extra columns asked for with `returning`, as returned. */
  row: Record<string, unknown>;
  /** What the lifecycle's `onTransition` wrote (undefined without one). */
  written: W;
}

export interface TransitionOptions {
  /** The organisation owning the row (required unless the lifecycle has no tenant column). */
  organizationId?: string;
  /** More columns written with the state: `sql\`issued_at = now(), number = ${n}\``. */
  set?: SqlFragment;
  /** More conditions the row must meet, over the alias `t`: `sql\`t.expires_at > now()\``. */
  where?: SqlFragment;
  /** More columns of the row to return: `'id, number'` (column names only), or `'*'` for the whole row. */
  returning?: string;
  /** Also return the state the row had (a sub-select in the same statement); off on hot paths. */
  readFrom?: boolean;
  /** The use case's own error for a refused transition; default `TransitionRefused`. */
  refused?: () => Error;
}

export interface Lifecycle<S extends string, T extends Record<string, TransitionDef<S>>, W = undefined> {
  readonly name: string;
  readonly table: string;
  readonly column: string;
  /** The columns the guarded UPDATE names besides the state: the row's key, its tenant (or null), the touched time (or null). */
  readonly columns: { readonly id: string; readonly tenant: string | null; readonly touch: string | null };
  readonly states: readonly S[];
  /** Each state by name, `INVOICE_LIFECYCLE.state.paid`: how code outside the module names one state. */
  readonly state: { readonly [K in S]: K };
  readonly transitions: T;
  /** Whether `transition` may start from `state`. */
  can(state: S, transition: keyof T & string): boolean;
  /** The state `transition` leads to from `state`, or undefined when it may not start there. */
  target(state: S, transition: keyof T & string): S | undefined;
  /** Throws `refused()` (default `TransitionRefused`) unless `transition` may start from `state`. */
  assert(state: S, transition: keyof T & string, refused?: () => Error): void;
  /** Whether `value` is one of the states (e.g. read from an untyped source). */
  isState(value: unknown): value is S;
  /** `('a', 'b')`: a list of this lifecycle's states as SQL text, checked against the list. */
  inList(states: readonly S[]): string;
  /** The same list as a fragment: `status IN ${lc.in(sql, OPEN)}`. */
  in(sql: Queryable, states: readonly S[]): SqlFragment;
  /**
   * The guarded UPDATE of one row (see the module's comment). The statement is sent when this is called, so callers
   * that pipeline statements keep their order.
   */
  transition(sql: Queryable, id: RowKey, transition: keyof T & string, opts?: TransitionOptions): Promise<TransitionResult<S, W>>;
  /**
   * The same guarded UPDATE for a use case to which a row not in a from-state is no error but "nothing to do" (an
   * end that happened already, a callback arriving late): undefined instead of the refusal, nothing written.
   */
  tryTransition(sql: Queryable, id: RowKey, transition: keyof T & string, opts?: Omit<TransitionOptions, 'refused'>): Promise<TransitionResult<S, W> | undefined>;
}

const IDENT = /^[a-z_][a-z0-9_]*$/;

/**
 * Every lifecycle defined so far in this process, for the test that holds each to its migration's CHECK (it imports
 * every `*-lifecycle.ts` module first).
 */
export const LIFECYCLES: Lifecycle<string, Record<string, TransitionDef<string>>, unknown>[] = [];

export function defineLifecycle<const S extends string, const T extends Record<string, TransitionDef<S>>, W = undefined>(
  def: LifecycleDef<S, T, W>,
): Lifecycle<S, T, W> {
  const tenant = def.tenantColumn === undefined ? 'organization_id' : def.tenantColumn;
  const idColumn = def.idColumn ?? 'id';
  const touch = def.touchColumn === undefined ? 'updated_at' : def.touchColumn;
  for (const ident of [def.table, def.column, idColumn, tenant, touch]) {
    if (ident !== null && !IDENT.test(ident)) throw new Error(`lifecycle ${def.name}: not an identifier: ${ident}`);
  }
  const stateSet = new Set<string>(def.states);
  const what = `${/^[aeiou]/i.test(def.name) ? 'an' : 'a'} ${def.name} ${def.stateNoun ?? 'state'}`;
  const inList = (states: readonly S[]): string => {
    for (const s of states) if (!stateSet.has(s)) throw new Error(`not ${what}: ${s}`);
    return `(${states.map((s) => `'${s}'`).join(', ')})`;
  };
  for (const [name, t] of Object.entries<TransitionDef<S>>(def.transitions)) {
    if (t.from.length === 0 && !t.fromUnset) throw new Error(`lifecycle ${def.name}: transition ${name} starts from no state`);
    if (t.from.length > 0) inList(t.from);
    inList([t.to]);
  }
  // Each transition's guard on the column, over an alias: `a."status" IN ('queued')`, or with fromUnset `… IS NULL`.
  const guards = Object.fromEntries(
    Object.entries<TransitionDef<S>>(def.transitions).map(([name, t]) => {
      const terms = [...(t.from.length > 0 ? [`"${def.column}" IN ${inList(t.from)}`] : []), ...(t.fromUnset ? [`"${def.column}" IS NULL`] : [])];
      return [name, (alias: string) => `(${terms.map((term) => `${alias}.${term}`).join(' OR ')})`];
    }),
  ) as Record<string, (alias: string) => string>;

  const can = (state: S, transition: keyof T & string): boolean => def.transitions[transition]!.from.includes(state);
  const refusal = (state: S | undefined, transition: keyof T & string): TransitionRefused =>
    new TransitionRefused(def.name, transition, state, [...def.transitions[transition]!.from, ...(def.transitions[transition]!.fromUnset ? ['unset'] : [])]);

  const lifecycle: Lifecycle<S, T, W> = {
    name: def.name,
    table: def.table,
    column: def.column,
    columns: { id: idColumn, tenant, touch },
    states: def.states,
    state: Object.fromEntries(def.states.map((s) => [s, s])) as { readonly [K in S]: K },
    transitions: def.transitions,
    can,
    target: (state, transition) => (can(state, transition) ? def.transitions[transition]!.to : undefined),
    assert(state, transition, refused) {
      if (!can(state, transition)) throw refused ? refused() : refusal(state, transition);
    },
    isState: (value): value is S => typeof value === 'string' && stateSet.has(value),
    inList,
    in: (sql, states) => sql.unsafe(inList(states)),
    transition(sql, id, transition, opts = {}) {
      return move(sql, id, transition, opts).then((moved) => {
        if (!moved) throw opts.refused ? opts.refused() : refusal(undefined, transition);
        return moved;
      });
    },
    tryTransition: (sql, id, transition, opts = {}) => move(sql, id, transition, opts),
  };

  /** The guarded UPDATE (sent at once), then the events hook; undefined when no row was in a from-state. */
  function move(sql: Queryable, id: RowKey, transition: keyof T & string, opts: TransitionOptions): Promise<TransitionResult<S, W> | undefined> {
    const t = def.transitions[transition];
    if (!t) throw new Error(`lifecycle ${def.name} has no transition ${transition}`);
    if (tenant !== null && opts.organizationId === undefined) throw new Error(`lifecycle ${def.name}: transition needs the organisation`);
    const returning = [...new Set([def.returning ?? '', opts.returning ?? ''].join(',').split(',').map((c) => c.trim()).filter((c) => c !== ''))];
    for (const c of returning) if (c !== '*' && !IDENT.test(c)) throw new Error(`lifecycle ${def.name}: returning takes column names, not ${c}`);
    const ident = (name: string) => sql.unsafe(`"${name}"`);
    const tenantMatch = (alias: string) => (tenant !== null ? sql`${sql.unsafe(`${alias}."${tenant}"`)} = ${opts.organizationId!} AND ` : sql``);
    const extra = sql.unsafe(returning.map((c) => (c === '*' ? ', t.*' : `, t."${c}"`)).join(''));
    const setTouch = touch ? sql`, ${ident(touch)} = now()` : sql``;
    const setMore = opts.set ? sql`, ${opts.set}` : sql``;
    const guard = (alias: string) => sql.unsafe(guards[transition]!(alias));
    const whereMore = opts.where ? sql` AND ${opts.where}` : sql``;
    // With readFrom the old state comes from a sub-select of the same statement; the guard stands on the updated row
    // too, so a concurrent transition that committed first (READ COMMITTED re-checks only the outer WHERE) makes this
    // one refused rather than overwritten. Without it the statement is the bare guarded UPDATE, for hot paths.
    const query = opts.readFrom || def.readFrom
      ? sql<Record<string, unknown>[]>`
          UPDATE ${ident(def.table)} t SET ${ident(def.column)} = ${t.to}${setTouch}${setMore}
          FROM (SELECT o.${ident(idColumn)} AS key, o.${ident(def.column)} AS from_state FROM ${ident(def.table)} o
                WHERE ${tenantMatch('o')}o.${ident(idColumn)} = ${id} AND ${guard('o')}) old
          WHERE ${tenantMatch('t')}t.${ident(idColumn)} = old.key AND ${guard('t')}${whereMore}
          RETURNING old.from_state AS "__from"${extra}`.execute()
      : sql<Record<string, unknown>[]>`
          UPDATE ${ident(def.table)} t SET ${ident(def.column)} = ${t.to}${setTouch}${setMore}
          WHERE ${tenantMatch('t')}t.${ident(idColumn)} = ${id} AND ${guard('t')}${whereMore}
          RETURNING NULL AS "__from"${extra}`.execute();
    return query.then(async ([row]) => {
      if (!row) return undefined;
      const { __from, ...rest } = row;
      const from = (__from ?? undefined) as S | undefined;
      const written = def.onTransition
        ? await def.onTransition(sql, { organizationId: opts.organizationId, id, transition, from, to: t.to, row: rest })
        : (undefined as W);
      return { from, to: t.to, row: rest, written };
    });
  }
  LIFECYCLES.push(lifecycle);
  return lifecycle;
}
