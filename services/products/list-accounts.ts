import type { Account, AccountListQuery } from '../../contracts/products.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { ACCOUNT_COLUMNS, toAccount, type AccountRow } from './product-queries.ts';

/** A chart of accounts reads in account-number order; id breaks ties so the keyset is total. */
export async function listAccounts(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: AccountListQuery,
): Promise<{ items: Account[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'sales_accounts', filters: [q.active ?? null] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor) as [string, string]) : null;
  const rows = await sql<AccountRow[]>`
    SELECT ${sql(ACCOUNT_COLUMNS)}
    FROM sales_accounts
    WHERE organization_id = ${organizationId}
      ${q.active !== undefined ? sql`AND active = ${q.active}` : sql``}
      ${after ? sql`AND (account_number, id) > (${after[0]}, ${after[1]})` : sql``}
    ORDER BY account_number, id
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.account_number, last.id]));
  return { items: items.map(toAccount), nextCursor };
}
