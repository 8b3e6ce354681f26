import type { Settlement, SettlementListQuery } from '../../contracts/settlements.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { sha256 } from '../shared/crypto.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { VERIFIED, type VerificationState } from '../organizations/verification-lifecycle.ts';
import { settle, settlementStatus, type SettledSource } from './settlement-fees.ts';

/**
 * A settlement's id, the same on every read: every id the API hands out is a UUID of version 4 or 7, so it is laid out
 * as version 4, its 122 free bits taken from a SHA-256 of the organisation and the payout date rather than from a
 * random source (settlements are computed, never stored, so the id has to be derivable).
 */
export function settlementId(organizationId: string, payoutDate: string): string {
  const b = sha256(`settlement\n${organizationId}\n${payoutDate}`).subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * GET /v1/settlements: computed on every read from the organisation's card and MobilePay payments (never stored),
 * newest payout first, keyset pages on the payout date. `from`/`to` bound the payout date.
 */
export async function listSettlements(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: SettlementListQuery,
  today: string,
): Promise<{ items: Settlement[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'settlements', filters: [q.from ?? null, q.to ?? null] };
  const before = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  // A payout is at most four days after its payments (a Saturday's is paid on Tuesday): a week's margin is enough.
  const [org] = await sql<{ verification: VerificationState }[]>`SELECT verification FROM organizations WHERE id = ${organizationId}`;
  const rows = await sql<{ source: SettledSource; amount_oere: number; payment_date: string }[]>`
    SELECT source, amount_oere, payment_date FROM payments
    WHERE organization_id = ${organizationId} AND source IN ('card', 'mobilepay')
      ${q.to !== undefined ? sql`AND payment_date <= ${q.to}::date` : sql``}
      ${q.from !== undefined ? sql`AND payment_date >= ${q.from}::date - 7` : sql``}
      ${before !== null ? sql`AND payment_date < ${before}::date` : sql``}`;
  const verified = org?.verification === VERIFIED;
  const all = settle(rows.map((r) => ({ source: r.source, amountOere: r.amount_oere, paymentDate: r.payment_date })))
    .filter((s) => (q.from === undefined || s.payoutDate >= q.from) && (q.to === undefined || s.payoutDate <= q.to))
    .filter((s) => before === null || s.payoutDate < before);
  const { items, nextCursor } = page(all.slice(0, limit + 1), limit, (last) => encodeCursor(keyring, scope, [last.payoutDate]));
  return {
    items: items.map((s) => ({ id: settlementId(organizationId, s.payoutDate), ...s, status: settlementStatus(s.payoutDate, today, verified) })),
    nextCursor,
  };
}
