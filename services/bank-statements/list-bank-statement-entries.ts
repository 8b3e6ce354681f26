import type { BankStatementEntry, BankStatementEntryListQuery } from '../../contracts/bank-statements.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { ENTRY_COLUMNS, toEntry, type EntryRow } from './bank-statement-queries.ts';

/**
 * GET /v1/bank-statements/{id}/entries: an import's entries in document order (their ids are time-ordered in that
 * order), optionally of one status, keyset-paginated on the id. A cursor belongs to its import and status filter.
 * Unknown or another organisation's import: 404 bank_statement_not_found.
 */
export async function listBankStatementEntries(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  statementId: string,
  q: BankStatementEntryListQuery,
): Promise<{ items: BankStatementEntry[]; nextCursor: string | null }> {
  if (!isUuid(statementId)) throw notFound('bank_statement_not_found', 'bank statement');
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'bank-statement-entries', filters: [statementId.toLowerCase(), q.status ?? null] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const [statement] = await sql<{ id: string }[]>`
    SELECT id FROM bank_statements WHERE organization_id = ${organizationId} AND id = ${statementId}`;
  if (!statement) throw notFound('bank_statement_not_found', 'bank statement');
  const rows = await sql<EntryRow[]>`
    SELECT ${sql(ENTRY_COLUMNS)} FROM bank_statement_entries
    WHERE organization_id = ${organizationId} AND statement_id = ${statementId}
      ${q.status ? sql`AND status = ${q.status}` : sql``}
      ${after ? sql`AND id > ${after}` : sql``}
    ORDER BY id
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: items.map((r) => toEntry(keyring, r)), nextCursor };
}
