import type { InvoiceLineInput } from '../../contracts/invoices.ts';
import { recordEvent } from '../events/record-event.ts';
import { createInvoice } from '../invoices/create-invoice.ts';
import { loadBuyer } from '../invoices/document-parties.ts';
import { reserveIssue } from '../invoices/issue-invoice.ts';
import type { ReservingRequest } from '../invoices/issue-protocol.ts';
import type { Clock } from '../shared/clock.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';
import { addDays, periodsDue, type Period } from './period-math.ts';
import { scheduleSubscription } from './schedule-subscription.ts';
import { assertCan, canSubscription } from './subscription-lifecycle.ts';
import {
  endIfExhausted,
  getSubscriptionRowOrThrow,
  nextInvoiceDateOf,
  scheduleOfRow,
  subscriptionEventData,
  subscriptionNotFound,
  type SubscriptionRow,
} from './subscription-queries.ts';

/** How long a run waits for another run's lease (docs/api-conventions.md, "Subscriptions", The lease). */
export const RUN_LEASE_WAIT = '10s';

export const notDue = () => new DomainError('subscription_not_due', 'No period of the subscription is due: its next invoice date is after today.');
const runInProgress = () =>
  new DomainError('subscription_run_in_progress', 'Another run of this subscription held it for more than 10 seconds; try again shortly.');

/**
 * The lease: the subscription's row, locked for the rest of the caller's transaction. A run holds it for one period
 * (its reservation transaction below), never for a whole catch-up, so manual runs and the schedule take turns period
 * by period. `wait`: give up after RUN_LEASE_WAIT with 409 subscription_run_in_progress (POST …/run); without it the
 * run waits as long as the holder's short transaction takes (the schedule). The row is read again after the lock,
 * by a statement of its own, so it shows what the holder committed (the period it ran).
 */
async function takeLease(sql: Queryable, organizationId: string, id: string, wait: boolean): Promise<SubscriptionRow> {
  const [prev] = wait ? await sql<{ v: string }[]>`SELECT current_setting('lock_timeout') AS v` : [];
  if (wait) await sql`SELECT set_config('lock_timeout', ${RUN_LEASE_WAIT}, true)`;
  try {
    const locked = await sql`SELECT 1 FROM subscriptions WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`;
    if (locked.length === 0) throw subscriptionNotFound();
  } catch (err) {
    if ((err as { code?: string }).code === '55P03') throw runInProgress();
    throw err;
  }
  if (wait) await sql`SELECT set_config('lock_timeout', ${prev!.v}, true)`;
  return getSubscriptionRowOrThrow(sql, organizationId, id);
}

export interface RunDeps {
  keyring: Keyring;
  clock: Clock;
}

/** The scheduled run's own request: its response is stored under this key when the issue commits (finish-issue.ts). */
export interface RunRequest {
  idempotencyKey: string;
  requestHash: Buffer;
}

export type ReservedRun = { invoiceId: string; period: Period; issueDate: string; send: boolean };

/**
 * The issue date of a period's invoice: its own start date, as if the run came on that day (a clock advance or an
 * outage that passed the start: the invoice and its dunning follow from its own dates), except for periods that
 * started before the subscription was created (a past startDate), which are issued on the day of creation.
 */
export const issueDateOf = (p: Period, createdOn: string): string => (p.start < createdOn ? createdOn : p.start);

/**
 * Step 1 of running a subscription's next due period, in the caller's transaction (POST …/run in its idempotent
 * mutation under the issue protocol, issue-protocol.ts; the SubscriptionSchedule in its own). Under the lease: 422 invalid_transition unless active, undefined
 * when no period is due (the route answers 422 subscription_not_due); else the oldest due period is run:
 *
 * - a draft with the subscription's lines, subscriptionId, periodStart and periodEnd, reserved for issue with the
 *   next number by the invoice issue itself (reserveIssue: issue date per `issueDateOf`, due issue date + dueDays,
 *   the send queued on finish when autoSend and the customer has an e-mail);
 * - the run receipt (subscription_runs), `subscription.invoiced`, the next period, and the schedule's row moved;
 * - the end when no period can follow.
 *
 * The receipt is written here, with the number's reservation, not in the transaction that makes the invoice issued:
 * once this commits the period is taken (no second run can make another invoice for it, the receipt's key and the
 * invoice's unique (subscription, periodStart) refuse one) and its invoice will be issued (the reservation is in the
 * wake index from this commit on, and the InvoiceIssue object finishes it if the runner dies before step 2). Had the
 * receipt waited for step 2, a crash between the two would leave a reserved invoice and a period still due, and the
 * rerun would make a second invoice for it; had step 2 failed, the period would be skipped. Rendering the PDF
 * (finish-issue.ts) happens after this commits, outside the lease.
 */
export async function reservePeriodRun(
  sql: Queryable,
  deps: RunDeps,
  organizationId: string,
  subscriptionId: string,
  reservation: ReservingRequest,
  opts: { wait: boolean },
): Promise<ReservedRun | undefined> {
  const row = await takeLease(sql, organizationId, subscriptionId, opts.wait);
  assertCan(row.status, 'run');
  const [{ today } = { today: '' }] = await sql<{ today: string }[]>`SELECT business_today(${organizationId})::text AS today`;
  const schedule = scheduleOfRow(row);
  const [period] = periodsDue(schedule, row.next_period, today, 1);
  if (!period) return undefined;

  const createdOn = (await sql<{ d: string }[]>`
    SELECT created_on::text AS d FROM subscriptions WHERE organization_id = ${organizationId} AND id = ${row.id}`)[0]!.d;
  const issueDate = issueDateOf(period, createdOn);
  const dueDate = addDays(issueDate, row.due_days);
  const lines: InvoiceLineInput[] = row.lines.map((l) => ({
    description: l.description,
    quantity: l.quantity,
    unitPriceOere: l.unitPriceOere,
    vatRateBps: l.vatRateBps,
    ...(l.vatExemptionReason !== null ? { vatExemptionReason: l.vatExemptionReason } : {}),
  }));
  const draft = await createInvoice(sql, deps.keyring, organizationId, {
    customerId: row.customer_id,
    lines,
    dueDate,
    // A customer that receives e-invoices needs one of them on every invoice (buyer_reference_required).
    buyerReference: row.buyer_reference,
    orderReference: row.order_reference,
  });
  await sql`
    UPDATE invoices SET subscription_id = ${row.id}, period_start = ${period.start}, period_end = ${period.end}
    WHERE organization_id = ${organizationId} AND id = ${draft.id}`;
  const send = row.auto_send && (await loadBuyer(sql, deps.keyring, organizationId, row.customer_id)).email !== null;
  await reserveIssue(sql, deps, organizationId, draft.id, { issueDate, dueDate }, { ...reservation, responseLocation: `/v1/invoices/${draft.id}`, send });
  await sql`
    INSERT INTO subscription_runs (organization_id, subscription_id, period_index, period_start, period_end, invoice_id)
    VALUES (${organizationId}, ${row.id}, ${period.index}, ${period.start}, ${period.end}, ${draft.id})`;
  const next = period.index + 1;
  await sql`
    UPDATE subscriptions SET next_period = ${next}, next_invoice_date = ${nextInvoiceDateOf(schedule, next, row.status)}, updated_at = now()
    WHERE organization_id = ${organizationId} AND id = ${row.id}`;
  const after = await getSubscriptionRowOrThrow(sql, organizationId, row.id);
  await recordEvent(sql, {
    organizationId,
    type: 'subscription.invoiced',
    entityId: row.id,
    data: { ...subscriptionEventData(after), invoiceId: draft.id, periodStart: period.start, periodEnd: period.end },
  });
  if (!(await endIfExhausted(sql, organizationId, after, today))) await scheduleSubscription(sql, organizationId, after);
  return { invoiceId: draft.id, period, issueDate, send };
}

/**
 * What the schedule does on a wake, in one transaction under the lease: run the oldest due period (step 1, as
 * above), or, with none due, end a subscription whose periods are exhausted and move its wake-index row to what it
 * waits for next (scheduleSubscription), or clear it.
 */
export type ScheduledRun =
  | { kind: 'reserved'; invoiceId: string; periodStart: string; periodEnd: string }
  | { kind: 'wait'; date: string }
  | { kind: 'idle'; status: string };

export async function runScheduledPeriod(
  sql: Queryable,
  deps: RunDeps & { requestKey: (subscriptionId: string, periodStart: string) => RunRequest },
  organizationId: string,
  subscriptionId: string,
): Promise<ScheduledRun> {
  const row = await takeLease(sql, organizationId, subscriptionId, false).catch((err: unknown) => {
    if (err instanceof DomainError && err.code === 'subscription_not_found') return undefined;
    throw err;
  });
  if (!row) return { kind: 'idle', status: 'gone' };
  const [{ today } = { today: '' }] = await sql<{ today: string }[]>`SELECT business_today(${organizationId})::text AS today`;
  if (canSubscription(row.status, 'run')) {
    const [due] = periodsDue(scheduleOfRow(row), row.next_period, today, 1);
    if (due) {
      const reservation = { ...deps.requestKey(subscriptionId, due.start), responseStatus: 201 };
      const run = await reservePeriodRun(sql, deps, organizationId, subscriptionId, reservation, { wait: false });
      if (run) return { kind: 'reserved', invoiceId: run.invoiceId, periodStart: run.period.start, periodEnd: run.period.end };
    }
  }
  if (await endIfExhausted(sql, organizationId, row, today)) return { kind: 'idle', status: 'ended' };
  await scheduleSubscription(sql, organizationId, row);
  if (canSubscription(row.status, 'run') && row.next_invoice_date) return { kind: 'wait', date: row.next_invoice_date };
  return { kind: 'idle', status: row.status };
}
