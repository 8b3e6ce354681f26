import type { CaseStatusView } from '../../contracts/cases.ts';
import type { Queryable } from '../shared/db.ts';
import { caseStatusOf, type CaseState } from './case-lifecycle.ts';

/** What a status read needs of a case row, with its event version (the count of its `sag.*` events). */
export interface CaseStatusRow {
  id: string;
  case_number: number;
  external_reference: string | null;
  invoice_id: string | null;
  state: CaseState;
  paakrav_frist: string | null;
  event_version: number;
  created_at: Date;
  updated_at: Date;
}

/** The case's events are its family's: their gap-free sekvensnummer is how many there are. */
export function findCaseStatusRow(
  sql: Queryable,
  organizationId: string,
  where: { id: string } | { externalReference: string },
): Promise<(CaseStatusRow & { body_mac: Buffer | null })[]> {
  const match = 'id' in where
    ? sql`c.id = ${where.id}`
    : sql`c.external_reference = ${where.externalReference} AND c.invoice_id IS NULL`;
  return sql<(CaseStatusRow & { body_mac: Buffer | null })[]>`
    SELECT c.id, c.case_number, c.external_reference, c.invoice_id, c.state, c.paakrav_frist::text AS paakrav_frist,
           c.body_mac, c.created_at, c.updated_at,
           (SELECT coalesce(max(e.sekvensnummer), 0) FROM events e
             WHERE e.entity_id = c.id AND e.organization_id = c.organization_id AND e.entity_family = 'sag')::int AS event_version
    FROM collection_cases c
    WHERE c.organization_id = ${organizationId} AND ${match}`;
}

/** The PII-free status object of create, replay and read. */
export function toCaseStatus(r: CaseStatusRow): CaseStatusView {
  return {
    id: r.id,
    caseNumber: r.case_number,
    externalReference: r.external_reference,
    fakturaId: r.invoice_id,
    state: r.state,
    status: caseStatusOf(r.state),
    paakravFrist: r.paakrav_frist,
    eventVersion: r.event_version,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}
