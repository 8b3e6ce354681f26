import type { BankStatement, BankStatementEntry } from '../../contracts/bank-statements.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { BANK_ENTRY_STATUSES, type BankEntryStatus } from './bank-entry-lifecycle.ts';

/** The columns every entry read selects, and how a row becomes the API shape (decrypting the remittance). */
export interface EntryRow {
  id: string;
  statement_id: string;
  account_id: string;
  identity: string;
  booking_date: string | null;
  amount_oere: number;
  currency: string;
  reference: string | null;
  remittance_enc: Buffer | null;
  status: BankEntryStatus;
  invoice_id: string | null;
  payment_id: string | null;
}

export const ENTRY_COLUMNS = [
  'id', 'statement_id', 'account_id', 'identity', 'booking_date', 'amount_oere', 'currency', 'reference', 'remittance_enc', 'status',
  'invoice_id', 'payment_id',
] as const;

export function toEntry(keyring: Keyring, r: EntryRow): BankStatementEntry {
  return {
    id: r.id,
    bookingDate: r.booking_date,
    amountOere: r.amount_oere,
    reference: r.reference,
    remittance: r.remittance_enc ? keyring.decrypt(r.remittance_enc) : null,
    status: r.status,
    invoiceId: r.invoice_id,
    paymentId: r.payment_id,
  };
}

/**
 * The booking key of an entry's payment (source `bank`): its account and identity, unique per organisation like the
 * entry's first sighting, so whichever way the entry is booked (on import, by hand), it is booked once.
 */
export const entryBookingKey = (r: Pick<EntryRow, 'account_id' | 'identity'>): string => `${r.account_id}:${r.identity}`;

interface StatementRow {
  id: string;
  account_id: string;
  statement_ids: string[];
  from_date: string | null;
  to_date: string | null;
  entry_count: number;
}

/**
 * One import as the API shows it, with its entries' counts as they are now (a bookkeeper's match moves one from
 * `unmatched` to `matched`). Unknown or another organisation's id: 404 bank_statement_not_found.
 */
export async function findBankStatement(sql: Queryable, organizationId: string, statementId: string): Promise<BankStatement> {
  if (!isUuid(statementId)) throw notFound('bank_statement_not_found', 'bank statement');
  const [row] = await sql<(StatementRow & { counts: Record<string, number> | null })[]>`
    SELECT s.id, s.account_id, s.statement_ids, s.from_date, s.to_date, s.entry_count,
           (SELECT json_object_agg(status, n) FROM (
              SELECT e.status, count(*)::int AS n FROM bank_statement_entries e
              WHERE e.organization_id = s.organization_id AND e.statement_id = s.id GROUP BY e.status) c) AS counts
    FROM bank_statements s WHERE s.organization_id = ${organizationId} AND s.id = ${statementId}`;
  if (!row) throw notFound('bank_statement_not_found', 'bank statement');
  const counts = Object.fromEntries(BANK_ENTRY_STATUSES.map((s) => [s, row.counts?.[s] ?? 0])) as Record<BankEntryStatus, number>;
  return {
    id: row.id,
    accountId: row.account_id,
    statementIds: row.statement_ids,
    from: row.from_date,
    to: row.to_date,
    counts: { entries: row.entry_count, ...counts },
  };
}
