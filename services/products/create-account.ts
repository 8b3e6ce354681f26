import type { Account, AccountCreate } from '../../contracts/products.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { ACCOUNT_COLUMNS, isUniqueViolation, toAccount, type AccountRow } from './product-queries.ts';

export async function createAccount(sql: Queryable, organizationId: string, input: AccountCreate): Promise<Account> {
  const row = { id: uuidv7(), organization_id: organizationId, account_number: input.accountNumber, name: input.name };
  try {
    const [created] = await sql<AccountRow[]>`
      INSERT INTO sales_accounts ${sql(row)} RETURNING ${sql(ACCOUNT_COLUMNS)}`;
    return toAccount(created!);
  } catch (err) {
    if (isUniqueViolation(err, 'sales_accounts_org_number')) {
      throw new DomainError('account_number_already_exists', `A sales account with number "${input.accountNumber}" already exists.`, {
        details: [{ path: '/accountNumber', message: 'is already used by another sales account' }],
      });
    }
    throw err;
  }
}
