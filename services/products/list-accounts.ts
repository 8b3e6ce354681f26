import type { Account, AccountListQuery } from '../../contracts/products.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { ACCOUNT_COLUMNS, toAccount, type AccountRow } from './product-queries.ts';

/**
 * A chart of accounts reads in account-number order, numbers by their value: 300 before 2000, as an accountant
 * expects, and numbers before account numbers with other characters (those in text order). id breaks ties (0300 and
 * 300) so the keyset is total.
 */
export async function listAccounts(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: AccountListQuery,
): Promise<{ items: Account[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  // The list's name changed with its order, so a cursor from the text order is invalid_cursor, not a skip or repeat.
  const scope: CursorScope = { organizationId, list: 'sales_accounts_by_value', filters: [q.active ?? null] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor) as [string, string]) : null;
  const rows = await sql<AccountRow[]>`
    SELECT ${sql(ACCOUNT_COLUMNS)}
    FROM sales_accounts
    WHERE organization_id = ${organizationId}
      ${q.active !== undefined ? sql`AND active = ${q.active}` : sql``}
      ${after ? sql`AND (${orderKey(sql, sql`account_number`)}, id) > (${orderKey(sql, sql`${after[0]}::text`)}, ${after[1]})` : sql``}
    ORDER BY ${orderKey(sql, sql`account_number`)}, id
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.account_number, last.id]));
  return { items: items.map(toAccount), nextCursor };
}

/** (not all digits, digits zero-padded to the longest number allowed, or the text as it is). */
const orderKey = (sql: Queryable, n: ReturnType<Queryable>) =>
  sql`${n} !~ '^[0-9]+$', CASE WHEN ${n} ~ '^[0-9]+$' THEN lpad(${n}, 20, '0') ELSE ${n} END`;
