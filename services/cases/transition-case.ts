import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../shared/db.ts';
import { CASE_LIFECYCLE, caseEventData, type CaseState, type CaseTransitionName } from './case-lifecycle.ts';

export { caseEventData };

/**
 * Moves one case along `transition` through the kit (CASE_LIFECYCLE): a guarded
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
  const moved = await CASE_LIFECYCLE.transition(sql, caseId, transition, { organizationId, set: opts.set, refused: opts.refused, returning: 'updated_at' });
  const row = moved.row as { case_number: number | string; external_reference: string | null; invoice_id: string | null; updated_at: Date };
  return {
    id: caseId,
    case_number: Number(row.case_number),
    external_reference: row.external_reference,
    invoice_id: row.invoice_id,
    state: moved.to,
    updated_at: row.updated_at,
    eventVersion: moved.written,
  };
}
