import type { CaseStatusView } from '../../contracts/cases.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { findCaseStatusRow, toCaseStatus } from './case-queries.ts';

/** GET /v1/cases/{id}: the PII-free status. Another organisation's case, or a malformed id, is the same 404. */
export async function getCase(sql: Queryable, organizationId: string, id: string): Promise<CaseStatusView> {
  if (!isUuid(id)) throw notFound('case_not_found', 'case');
  const [row] = await findCaseStatusRow(sql, organizationId, { id });
  if (!row) throw notFound('case_not_found', 'case');
  return toCaseStatus(row);
}
