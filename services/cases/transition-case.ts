import type { PendingQuery, Row } from 'postgres';
import type { CaseEventData } from '../../contracts/event-catalogue.ts';
import { recordEvent, type EventRecord } from '../events/record-event.ts';
import type { Queryable } from '../shared/db.ts';
import { CASE_STATES, CASE_TRANSITIONS, caseStatusOf, eventsFor, type CaseEventType, type CaseState, type CaseTransitionName } from './case-lifecycle.ts';

/**
 * Moves one case along `transition`, like transitionInvoice: a guarded
 * `UPDATE collection_cases SET state = <to>, updated_at = now(), <set> WHERE … AND state IN (<from-states>) RETURNING …`,
 * then the transition's `sag.*` events (`eventsFor`: its own, then `sag.status_aendret` when the status changes), in
 * the caller's transaction. Callers hold the case row's lock (`lockCase`) and read its state; the guard refuses a row
 * that is no longer in a from-state with `refused()`, so a state is never overwritten by a write that read it earlier.
 */
export interface CaseRowFacts {
  id: string;
  case_number: number;
  external_reference: string | null;
  invoice_id: string | null;
  state: CaseState;
}

export interface TransitionedCase extends CaseRowFacts {
  updated_at: Date;
  /** The sekvensnummer of the last event written: the case's eventVersion now. */
  eventVersion: number;
}

type SqlFragment = PendingQuery<Row[]>;

const stateList = (states: readonly CaseState[]): string => {
  for (const s of states) if (!(CASE_STATES as readonly string[]).includes(s)) throw new Error(`not a case state: ${s}`);
  return `(${states.map((s) => `'${s}'`).join(', ')})`;
};

const FROM_LISTS = Object.fromEntries(
  Object.entries(CASE_TRANSITIONS).map(([name, t]) => [name, stateList(t.from)]),
) as Record<CaseTransitionName, string>;

/** The event payload of a case in `state`: no personal data. */
export const caseEventData = (c: Omit<CaseRowFacts, 'id'>, state: CaseState = c.state): CaseEventData => ({
  caseNumber: Number(c.case_number),
  state,
  status: caseStatusOf(state),
  fakturaId: c.invoice_id,
  externalReference: c.external_reference,
});

/** Locks the case's row (FOR UPDATE) and reads what a transition needs; undefined when there is none. */
export async function lockCase(sql: Queryable, organizationId: string, caseId: string): Promise<(CaseRowFacts & { paakrav_sent_on: string | null; paakrav_frist: string | null; handed_over_at: Date | null }) | undefined> {
  const [row] = await sql<(CaseRowFacts & { paakrav_sent_on: string | null; paakrav_frist: string | null; handed_over_at: Date | null })[]>`
    SELECT id, case_number::int AS case_number, external_reference, invoice_id, state,
           paakrav_sent_on::text AS paakrav_sent_on, paakrav_frist::text AS paakrav_frist, handed_over_at
    FROM collection_cases WHERE organization_id = ${organizationId} AND id = ${caseId} FOR UPDATE`;
  return row;
}

export async function transitionCase(
  sql: Queryable,
  organizationId: string,
  caseId: string,
  transition: CaseTransitionName,
  opts: { set?: SqlFragment; refused: () => Error },
): Promise<TransitionedCase> {
  const { to } = CASE_TRANSITIONS[transition];
  // The state before the change, read in the same statement (the row is locked by the caller, so it is the one changed).
  const [row] = await sql<(CaseRowFacts & { from_state: CaseState; updated_at: Date })[]>`
    UPDATE collection_cases c SET state = ${to}, updated_at = now()${opts.set ? sql`, ${opts.set}` : sql``}
    FROM (SELECT id, state AS from_state FROM collection_cases
          WHERE organization_id = ${organizationId} AND id = ${caseId} AND state IN ${sql.unsafe(FROM_LISTS[transition])}) old
    WHERE c.organization_id = ${organizationId} AND c.id = old.id
    RETURNING c.id, c.case_number::int AS case_number, c.external_reference, c.invoice_id, c.state, old.from_state, c.updated_at`;
  if (!row) throw opts.refused();
  let eventVersion = 0;
  for (const type of eventsFor(row.from_state, transition)) {
    const e = await recordEvent(sql, { organizationId, type, entityId: caseId, data: caseEventData(row, to) } as EventRecord<CaseEventType>);
    eventVersion = e.sekvensnummer;
  }
  const { from_state: _from, ...rest } = row;
  return { ...rest, eventVersion };
}
