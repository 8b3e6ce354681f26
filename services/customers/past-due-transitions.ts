import type { Clock } from '../shared/clock.ts';
import type { Db, Queryable } from '../shared/db.ts';
import { recordEvent } from '../events/record-event.ts';
import { customerBalanceRow, daysBetween, pastDueCustomerIds } from './balance-queries.ts';
import { WORK } from '../../contracts/workflows.ts';
import { clearWake, scheduleWake } from '../clock/wake-index.ts';

/**
 * `customer.past_due` and `customer.settled` (docs/api-conventions.md, "Customer balance"): fired when a customer's
 * `pastDue` (the threshold rule of the balance, balance-queries.ts) changes, and only then (never repeatedly).
 * `customers.past_due` holds what was last announced; a transition flips it and records the event in one transaction.
 *
 * What moves `pastDue`, and where it is reconciled:
 * - a payment or a credit note on an overdue invoice can only lower what is owed overdue: the payment's and the
 *   credit's own transaction, for a customer announced past due (so `customer.settled` is in the log when the
 *   payment's response is); one whose flag it read before a concurrent announcement leaves it to the organisation's
 *   next look (below);
 * - time (invoices fall due, days accumulate): a test clock advance reconciles its organisation in its transaction;
 *   real time, an invoice issued with a due date already passed, and a changed threshold are reconciled by the
 *   organisation's PastDue wake-index row (`announcePastDue`), due the day after an invoice's due date, then at each
 *   next business day while something is past due, and at once when the thresholds change.
 *
 * The customers are locked first and their state computed in a later statement, whose snapshot then holds every
 * change committed by an earlier lock holder: two reconciliations of one customer see each other, so a transition
 * is announced once. A caller's today is read before the lock; one older than the day of the customer's last
 * announcement is not used for that customer, so a slow caller cannot undo what a later day announced.
 */
export async function reconcilePastDue(
  sql: Queryable,
  organizationId: string,
  today: string,
  customerIds?: readonly string[],
): Promise<{ pastDue: string[]; settled: string[] }> {
  const none = { pastDue: [], settled: [] };
  // The whole organisation: only the customers whose announced state differs from today's are locked (a row lock is
  // a write, and most of the time nothing changed). One that changes meanwhile is found next time.
  const ids = customerIds ?? (await differingCustomers(sql, organizationId, today));
  if (ids.length === 0) return none;
  // Customers whose last announcement was for a later day are left alone: this caller's today was read before it,
  // and computing with it could only undo that announcement (time moves overdue amounts one way).
  const locked = await sql<{ id: string; past_due: boolean; past_due_as_of: string | null; external_reference: string | null }[]>`
    SELECT id, past_due, past_due_as_of, external_reference FROM customers
    WHERE organization_id = ${organizationId} AND id = ANY(${ids as string[]}::uuid[])
    ORDER BY id
    FOR NO KEY UPDATE`;
  const current = locked.filter((c) => c.past_due_as_of === null || c.past_due_as_of <= today);
  if (current.length === 0) return none;
  // One array parameter, whatever the number of customers (a parameter each would stop at 65 534).
  const now = new Set(
    (await sql<{ customer_id: string }[]>`
      SELECT p.customer_id FROM (${pastDueCustomerIds(sql, organizationId, today)}) p
      WHERE p.customer_id = ANY(${current.map((c) => c.id)}::uuid[])`).map((r) => r.customer_id),
  );
  const out = { pastDue: [] as string[], settled: [] as string[] };
  for (const c of current) {
    const pastDue = now.has(c.id);
    if (pastDue === c.past_due) continue;
    await sql`
      UPDATE customers SET past_due = ${pastDue}, past_due_as_of = ${today}
      WHERE organization_id = ${organizationId} AND id = ${c.id}`;
    const figures = await customerBalanceRow(sql, organizationId, c.id, today);
    await recordEvent(sql, {
      organizationId,
      type: pastDue ? 'customer.past_due' : 'customer.settled',
      entityId: c.id,
      data: {
        customerId: c.id,
        asOf: today,
        overdueOere: figures?.overdue_oere ?? 0,
        overdueCount: figures?.overdue_count ?? 0,
        oldestDueDate: figures?.oldest_due_date ?? null,
        daysOverdue: figures?.oldest_due_date ? daysBetween(figures.oldest_due_date, today) : 0,
        externalReference: c.external_reference,
      },
    });
    (pastDue ? out.pastDue : out.settled).push(c.id);
  }
  return out;
}

/**
 * The organisation's customers whose announced state differs from today's, read without locks. Both halves come from
 * small sets: the announced customers (partial index customers_past_due) and today's past-due ones.
 */
async function differingCustomers(sql: Queryable, organizationId: string, today: string): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    WITH p AS MATERIALIZED (${pastDueCustomerIds(sql, organizationId, today)})
    SELECT c.id FROM customers c
    WHERE c.organization_id = ${organizationId} AND c.past_due AND NOT EXISTS (SELECT 1 FROM p WHERE p.customer_id = c.id)
    UNION ALL
    SELECT c.id FROM p JOIN customers c ON c.organization_id = ${organizationId} AND c.id = p.customer_id
    WHERE NOT c.past_due`;
  return rows.map((r) => r.id);
}

/**
 * The PastDue object's step for one organisation (workflows/past-due.ts): reconciles its customers with its today,
 * announcing each transition, and in the same transaction moves its wake-index row to the next moment time alone can
 * change a customer's state (`past_due_next_check`, migration 030: its next business day while something is past
 * due, else the day after its earliest open due date), or clears it when nothing is open. Returns how many customers
 * changed and when it looks next (business time, ISO), or null.
 */
export async function announcePastDue(db: Db, clock: Clock, organizationId: string): Promise<{ changed: number; next: string | null }> {
  const today = await clock.today(organizationId);
  return db.tx(async (tx) => {
    const r = await reconcilePastDue(tx, organizationId, today);
    const [row] = await tx<{ next: Date | null }[]>`SELECT past_due_next_check(${organizationId}) AS next`;
    const target = WORK.pastDue(organizationId);
    if (row!.next) await scheduleWake(tx, organizationId, target, row!.next);
    else await clearWake(tx, target);
    return { changed: r.pastDue.length + r.settled.length, next: row!.next?.toISOString() ?? null };
  });
}
