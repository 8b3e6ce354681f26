import type { BankStatement } from '../../contracts/bank-statements.ts';
import type { Queryable } from '../shared/db.ts';
import { findBankStatement } from './bank-statement-queries.ts';

/** GET /v1/bank-statements/{id}: an import with its entries' counts as they are now. */
export function getBankStatement(sql: Queryable, organizationId: string, statementId: string): Promise<BankStatement> {
  return findBankStatement(sql, organizationId, statementId);
}
