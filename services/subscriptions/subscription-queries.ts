import type { Subscription, SubscriptionLine, SubscriptionLineInput } from '../../contracts/subscriptions.ts';
import { WORK } from '../../contracts/workflows.ts';
import { clearWake } from '../clock/wake-index.ts';
import { recordEvent } from '../events/record-event.ts';
import { INVOICE_LIFECYCLE, UNISSUED_STATUSES } from '../invoices/invoice-lifecycle.ts';
import { computeTotals, DEFAULT_VAT_RATE_BPS } from '../invoices/invoice-totals.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { countPeriodsDue, periodComes, periodStart, type Interval, type PeriodSchedule } from './period-math.ts';
import { canSubscription, PAUSED_SUBSCRIPTION_STATUS, SUBSCRIPTION_LIFECYCLE, subscriptionEventData, type SubscriptionStatus } from './subscription-lifecycle.ts';

/** A stored line: the input with its VAT rate filled in and the exemption reason null when none was given. */
export interface StoredLine {
  description: string;
  quantity: number;
  unitPriceOere: number;
  vatRateBps: number;
  vatExemptionReason: Exclude<SubscriptionLineInput['vatExemptionReason'], undefined>;
}

export interface SubscriptionRow {
  id: string;
  customer_id: string;
  name: string;
  interval_unit: Interval['unit'];
  interval_count: number;
  start_date: string;
  end_date: string | null;
  due_days: number;
  auto_send: boolean;
  lines: StoredLine[];
  external_reference: string | null;
  metadata: Record<string, string> | null;
  buyer_reference: string | null;
  order_reference: string | null;
  status: SubscriptionStatus;
  anchor_date: string;
  anchor_period: number;
  next_period: number;
  next_invoice_date: string | null;
  paused_at: Date | null;
  cancelled_at: Date | null;
  ended_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** Issued invoices (run receipts whose invoice is issued). */
  invoice_count: number;
  /** Whether any period has a run receipt (also one whose invoice is still being issued). */
  has_runs: boolean;
  latest_invoice: { id: string; number: number; issueDate: string; periodStart: string; periodEnd: string } | null;
  /** Run receipts whose invoice is not issued yet (reserved, its PDF still being rendered), and the first one's period start. */
  unissued_runs: { count: number; firstStart: string | null };
}

/** The select list of every subscription read, over the alias `s`. */
export const subscriptionSelect = (sql: Queryable) => sql`
  s.id, s.customer_id, s.name, s.interval_unit, s.interval_count, s.start_date, s.end_date, s.due_days, s.auto_send,
  s.lines, s.external_reference, s.metadata, s.buyer_reference, s.order_reference, s.status, s.anchor_date, s.anchor_period, s.next_period,
  s.next_invoice_date, s.paused_at, s.cancelled_at, s.ended_at, s.created_at, s.updated_at,
  (SELECT count(*) FROM subscription_runs r JOIN invoices i ON i.organization_id = r.organization_id AND i.id = r.invoice_id
    WHERE r.organization_id = s.organization_id AND r.subscription_id = s.id
      AND i.status NOT IN ${INVOICE_LIFECYCLE.in(sql, UNISSUED_STATUSES)})::int AS invoice_count,
  EXISTS (SELECT 1 FROM subscription_runs r WHERE r.organization_id = s.organization_id AND r.subscription_id = s.id) AS has_runs,
  (SELECT json_build_object('id', i.id, 'number', i.number, 'issueDate', i.issue_date,
                            'periodStart', r.period_start, 'periodEnd', r.period_end)
   FROM subscription_runs r JOIN invoices i ON i.organization_id = r.organization_id AND i.id = r.invoice_id
   WHERE r.organization_id = s.organization_id AND r.subscription_id = s.id AND i.status NOT IN ${INVOICE_LIFECYCLE.in(sql, UNISSUED_STATUSES)}
   ORDER BY r.period_start DESC LIMIT 1) AS latest_invoice,
  (SELECT json_build_object('count', count(*), 'firstStart', min(r.period_start))
   FROM subscription_runs r JOIN invoices i ON i.organization_id = r.organization_id AND i.id = r.invoice_id
   WHERE r.organization_id = s.organization_id AND r.subscription_id = s.id
     AND i.status IN ${INVOICE_LIFECYCLE.in(sql, UNISSUED_STATUSES)}) AS unissued_runs`;

/**
 * The API's `nextInvoiceDate` over the alias `s`, for filters: the stored one, or, while a period's invoice is still
 * being issued, that period's start (toSubscription says why).
 */
export const nextInvoiceDateSql = (sql: Queryable) => sql`
  CASE WHEN s.next_invoice_date IS NULL THEN NULL ELSE coalesce(
    (SELECT min(r.period_start) FROM subscription_runs r JOIN invoices i ON i.organization_id = r.organization_id AND i.id = r.invoice_id
     WHERE r.organization_id = s.organization_id AND r.subscription_id = s.id AND i.status IN ${INVOICE_LIFECYCLE.in(sql, UNISSUED_STATUSES)}),
    s.next_invoice_date) END`;

/** The period schedule of a stored subscription. */
export const scheduleOfRow = (r: Pick<SubscriptionRow, 'anchor_date' | 'anchor_period' | 'interval_unit' | 'interval_count' | 'end_date'>): PeriodSchedule => ({
  anchorDate: r.anchor_date,
  anchorPeriod: r.anchor_period,
  interval: { unit: r.interval_unit, count: r.interval_count },
  endDate: r.end_date,
});

/** nextInvoiceDate: the start of `nextPeriod` while active and that period comes; otherwise null. */
export function nextInvoiceDateOf(s: PeriodSchedule, nextPeriod: number, status: SubscriptionStatus): string | null {
  if (!canSubscription(status, 'run') || !periodComes(s, nextPeriod)) return null;
  return periodStart(s, nextPeriod);
}

/** Lines as stored: the defaults filled in. */
export const storedLines = (lines: SubscriptionLineInput[]): StoredLine[] =>
  lines.map((l) => ({
    description: l.description,
    quantity: l.quantity,
    unitPriceOere: l.unitPriceOere,
    vatRateBps: l.vatRateBps ?? DEFAULT_VAT_RATE_BPS,
    vatExemptionReason: l.vatExemptionReason ?? null,
  }));

/**
 * The lines with their amounts and the totals, by the invoice arithmetic (services/invoices/invoice-totals.ts): what
 * each period's invoice will show. It also applies the invoice lines' checks (422 at `/lines/{i}/…`).
 */
export function linesWithAmounts(lines: StoredLine[]): { lines: SubscriptionLine[]; netOere: number; vatOere: number; grossOere: number } {
  const totals = computeTotals(lines);
  return {
    lines: lines.map((l, i) => {
      const a = totals.lines[i]!;
      return { ...l, netOere: a.netOere, vatOere: a.vatOere, grossOere: a.grossOere };
    }),
    netOere: totals.netOere,
    vatOere: totals.vatOere,
    grossOere: totals.grossOere,
  };
}

/**
 * The API shape. `today` is the organisation's business date (periodsBehind).
 *
 * A period counts as invoiced only once its invoice is issued. The stored `next_period` moves on when a run reserves
 * the period's invoice (run-period.ts: the period is taken then, so no second run makes another invoice for it), and
 * the invoice is issued moments later, when its PDF is stored. In between, the period is still shown as not invoiced:
 * it counts in `periodsBehind`, and `nextInvoiceDate` is its start, as `invoiceCount` and `latestInvoice` leave its
 * invoice out until it is issued.
 */
export function toSubscription(r: SubscriptionRow, today: string): Subscription {
  const schedule = scheduleOfRow(r);
  const active = canSubscription(r.status, 'run');
  const unissued = active ? r.unissued_runs : { count: 0, firstStart: null };
  return {
    id: r.id,
    customerId: r.customer_id,
    name: r.name,
    interval: { unit: r.interval_unit, count: r.interval_count },
    startDate: r.start_date,
    endDate: r.end_date,
    dueDays: r.due_days,
    autoSend: r.auto_send,
    lines: linesWithAmounts(r.lines).lines,
    externalReference: r.external_reference,
    metadata: r.metadata,
    buyerReference: r.buyer_reference,
    orderReference: r.order_reference,
    status: r.status,
    nextInvoiceDate: unissued.firstStart ?? r.next_invoice_date,
    invoiceCount: r.invoice_count,
    periodsBehind: active ? unissued.count + countPeriodsDue(schedule, r.next_period, today) : 0,
    latestInvoice: r.latest_invoice,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    pausedAt: r.paused_at?.toISOString() ?? null,
    cancelledAt: r.cancelled_at?.toISOString() ?? null,
    endedAt: r.ended_at?.toISOString() ?? null,
  };
}

/** One subscription of the organisation (`lock`: FOR UPDATE for the rest of the transaction); undefined when none. */
export async function findSubscriptionRow(
  sql: Queryable,
  organizationId: string,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<SubscriptionRow | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await sql<SubscriptionRow[]>`
    SELECT ${subscriptionSelect(sql)} FROM subscriptions s
    WHERE s.organization_id = ${organizationId} AND s.id = ${id}
    ${opts.lock ? sql`FOR UPDATE OF s` : sql``}`;
  return row;
}

export const subscriptionNotFound = () => notFound('subscription_not_found', 'subscription');

export async function getSubscriptionRowOrThrow(sql: Queryable, organizationId: string, id: string, opts: { lock?: boolean } = {}): Promise<SubscriptionRow> {
  const row = await findSubscriptionRow(sql, organizationId, id, opts);
  if (!row) throw subscriptionNotFound();
  return row;
}

export { subscriptionEventData };

type PlainSubscriptionEvent = 'subscription.created' | 'subscription.updated' | 'subscription.paused' | 'subscription.resumed' | 'subscription.cancelled' | 'subscription.ended';

/** Records a `subscription.*` event of the (locked) subscription in the caller's transaction. */
export async function recordSubscriptionEvent(sql: Queryable, organizationId: string, type: PlainSubscriptionEvent, r: SubscriptionRow): Promise<void> {
  await recordEvent(sql, { organizationId, type, entityId: r.id, data: subscriptionEventData(r) });
}

/**
 * Ends the (locked, re-read) subscription when no further period can come: its next period starts after endDate,
 * or it is paused and the business date `today` has passed endDate (every period left started during the pause and
 * is skipped). Status `cancelled`, `endedAt` set, `nextInvoiceDate` null, `subscription.ended` written once (the guard
 * on the status makes a second call a no-op). Returns whether it ended it. The PATCH and resume call it after their
 * change; the run calls it after each period's receipt, and the schedule when the business date passes endDate.
 */
export async function endIfExhausted(sql: Queryable, organizationId: string, r: SubscriptionRow, today: string): Promise<boolean> {
  if (!canSubscription(r.status, 'end')) return false;
  const pausedPastEnd = r.status === PAUSED_SUBSCRIPTION_STATUS && r.end_date !== null && today > r.end_date;
  if (periodComes(scheduleOfRow(r), r.next_period) && !pausedPastEnd) return false;
  const ended = await SUBSCRIPTION_LIFECYCLE.tryTransition(sql, r.id, 'end', {
    organizationId,
    set: sql`ended_at = now(), paused_at = NULL, next_invoice_date = NULL`,
  });
  if (!ended) return false;
  await clearWake(sql, WORK.subscriptionSchedule(organizationId, r.id));
  return true;
}
