/**
 * What the drill reads once the load has stopped: PostgreSQL (the system of record), the API's own plan for each
 * invoice's next reminder, and what the receivers got. It decides nothing; test/drill/checks.ts does.
 */
import type { Sql } from '../../services/shared/db.ts';
import type { Received } from '../helpers/webhooks.ts';
import type {
  BookedPayment,
  CaseFact,
  CommittedEvent,
  HandOverFact,
  MailCounts,
  NumberSeriesFact,
  OverdueReminder,
  Progress,
  ReminderFact,
  SubscriptionFact,
  WakeRowFact,
  WebhookDelivery,
} from './checks.ts';
import type { DrillOrg } from './organisations.ts';

export interface Facts {
  booked: BookedPayment[];
  committed: CommittedEvent[];
  deliveries: WebhookDelivery[];
  reminders: ReminderFact[];
  overdueReminders: OverdueReminder[];
  cases: CaseFact[];
  handOvers: HandOverFact[];
  subscriptions: SubscriptionFact[];
  sends: { invoiceId: string; status: string }[];
  series: NumberSeriesFact[];
  wakeRows: WakeRowFact[];
  progress: Progress[];
  mails: MailCounts;
}

const header = (r: Received, name: string): string => {
  const v = r.headers[name];
  return Array.isArray(v) ? v.join(',') : (v ?? '');
};

/** Message-ID → how many times the SMTP sink took it. */
export function countMails(raw: readonly Buffer[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of raw) {
    const head = m.toString('utf8', 0, Math.min(m.length, 16_384)).split(/\r?\n\r?\n/, 1)[0]!;
    const id = /^message-id:\s*<([^>]+)>/im.exec(head)?.[1] ?? '(no Message-ID)';
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Events of the drill's organisations that their endpoints were to receive (committed after the endpoint). */
export async function committedEvents(sql: Sql, orgs: readonly DrillOrg[]): Promise<(CommittedEvent & { occurredAt: number })[]> {
  const out: (CommittedEvent & { occurredAt: number })[] = [];
  for (const o of orgs) {
    const rows = await sql<{ id: string; type: string; occurred_at: Date }[]>`
      SELECT id, type, occurred_at FROM events
      WHERE organization_id = ${o.organizationId} AND occurred_at >= ${new Date(o.endpointCreatedAt)} ORDER BY id`;
    out.push(...rows.map((r) => ({ id: r.id, type: r.type, occurredAt: r.occurred_at.getTime() })));
  }
  return out;
}

export const webhookDeliveries = (received: readonly Received[]): (WebhookDelivery & { at: number })[] =>
  received.map((r) => ({ webhookId: header(r, 'webhook-id'), eventId: (JSON.parse(r.body) as { id: string }).id, at: r.at }));

export async function readFacts(
  sql: Sql,
  orgs: { shop: DrillOrg; calendar: DrillOrg },
  received: { webhooks: readonly Received[]; handOvers: readonly Received[]; mails: readonly Buffer[] },
): Promise<Facts> {
  const all = [orgs.shop, orgs.calendar];
  const ids = all.map((o) => o.organizationId);
  const cal = orgs.calendar.organizationId;

  const booked = (
    await sql<{ booking_key: string; id: string; amount_oere: string }[]>`
      SELECT booking_key, id, amount_oere FROM payments WHERE organization_id IN ${sql(ids)} AND source = 'manual'`
  ).map((r) => ({ key: r.booking_key, paymentId: r.id, amountOere: Number(r.amount_oere) }));

  const events = await committedEvents(sql, all);
  const deliveries = webhookDeliveries(received.webhooks);
  const occurred = new Map(events.map((e) => [e.id, e.occurredAt]));

  const reminders = (
    await sql<{ id: string; invoice_id: string; type: string; reminder_number: number | null; channel: string | null; status: string; delivery: string; created_at: Date }[]>`
      SELECT id, invoice_id, type, reminder_number, channel, status, delivery, created_at FROM reminders WHERE organization_id = ${cal}`
  ).map((r) => ({
    id: r.id,
    invoiceId: r.invoice_id,
    step: r.type === 'reminder' ? `reminder ${r.reminder_number}` : 'payment reminder',
    channel: r.channel,
    status: r.status,
    delivery: r.delivery,
    createdAt: r.created_at.getTime(),
  }));

  // The engine's plan, as the API answers it: a next reminder dated today or earlier was left behind.
  const today = (await orgs.calendar.api.once('GET', '/v1/test-clock')).body.data.today as string;
  const open = await sql<{ id: string }[]>`
    SELECT id FROM invoices WHERE organization_id = ${cal} AND type = 'invoice' AND status IN ('issued', 'overdue')`;
  const overdueReminders: OverdueReminder[] = [];
  for (const { id } of open) {
    const a = await orgs.calendar.api.once('GET', `/v1/invoices/${id}/reminders`);
    const next = a.body?.meta?.nextReminder as { type: string; reminderNumber: number | null; date: string } | null | undefined;
    if (a.status !== 200) overdueReminders.push({ invoiceId: id, step: `(GET …/reminders answered ${a.status})`, date: '', today });
    else if (next && next.date <= today) {
      overdueReminders.push({ invoiceId: id, step: next.type === 'reminder' ? `reminder ${next.reminderNumber}` : 'payment reminder', date: next.date, today });
    }
  }

  const caseRows = await sql<{ id: string; state: string; handed_over: boolean; hand_over_due: boolean; created_at: Date; handed_over_at: Date | null; types: string[] }[]>`
    SELECT c.id, c.state, c.handed_over_at IS NOT NULL AS handed_over, c.handed_over_at, c.created_at,
           c.state = 'PAAKRAV_SENDT' AND c.paakrav_frist + 1 <= business_today(c.organization_id) AS hand_over_due,
           coalesce((SELECT array_agg(e.type ORDER BY e.sekvensnummer) FROM events e
                     WHERE e.organization_id = c.organization_id AND e.entity_id = c.id), '{}') AS types
    FROM collection_cases c WHERE c.organization_id = ${cal}`;
  const cases: CaseFact[] = caseRows.map((c) => ({ id: c.id, state: c.state, handedOver: c.handed_over, handOverDue: c.hand_over_due, eventTypes: c.types }));
  const handOvers = received.handOvers.map((r) => {
    const doc = JSON.parse(r.body) as { handOverId: string; case: { id: string } };
    return { caseId: doc.case.id, handOverId: doc.handOverId };
  });

  const runRows = await sql<{ subscription_id: string; period_index: number; invoice_id: string; created_at: Date }[]>`
    SELECT subscription_id, period_index, invoice_id, created_at FROM subscription_runs WHERE organization_id = ${cal}`;
  const periodRows = await sql<{ subscription_id: string; period_start: string; n: number; unissued: number }[]>`
    SELECT subscription_id, period_start::text, count(*)::int AS n, count(*) FILTER (WHERE status IN ('draft', 'issuing'))::int AS unissued
    FROM invoices WHERE organization_id = ${cal} AND subscription_id IS NOT NULL GROUP BY subscription_id, period_start`;
  const subs = await sql<{ id: string; auto_send: boolean }[]>`SELECT id, auto_send FROM subscriptions WHERE organization_id = ${cal}`;
  const subscriptions: SubscriptionFact[] = [];
  for (const s of subs) {
    const a = await orgs.calendar.api.once('GET', `/v1/subscriptions/${s.id}`);
    const runs = runRows.filter((r) => r.subscription_id === s.id);
    const periods = periodRows.filter((p) => p.subscription_id === s.id);
    subscriptions.push({
      id: s.id,
      runs: runs.map((r) => r.period_index),
      invoicesPerPeriod: new Map(periods.map((p) => [p.period_start, p.n])),
      unissued: periods.reduce((n, p) => n + p.unissued, 0),
      periodsBehind: a.status === 200 ? (a.body.data.periodsBehind as number) : -1,
      mailedInvoices: s.auto_send ? runs.map((r) => r.invoice_id) : [],
    });
  }

  const sends = (
    await sql<{ invoice_id: string; status: string }[]>`SELECT invoice_id, status FROM invoice_sends WHERE organization_id IN ${sql(ids)}`
  ).map((r) => ({ invoiceId: r.invoice_id, status: r.status }));

  const series: NumberSeriesFact[] = [];
  for (const o of all) {
    const numbers = await sql<{ number: string }[]>`SELECT number FROM invoices WHERE organization_id = ${o.organizationId} AND number IS NOT NULL`;
    const [next] = await sql<{ next_number: string }[]>`SELECT next_number FROM number_series WHERE organization_id = ${o.organizationId}`;
    series.push({ organization: o.name, numbers: numbers.map((r) => Number(r.number)), nextNumber: next ? Number(next.next_number) : 1 });
  }

  const wakeRows = await sql<WakeRowFact[]>`
    SELECT service, key, due_at <= business_now(organization_id) AS due, parked_at IS NOT NULL AS parked
    FROM wake_index WHERE organization_id IN ${sql(ids)} ORDER BY service, key`;

  const progress: Progress[] = [
    ...deliveries.flatMap((d) => (occurred.has(d.eventId) ? [{ kind: 'webhook' as const, started: occurred.get(d.eventId)!, at: d.at }] : [])),
    ...reminders.map((r) => ({ kind: 'timed step' as const, started: r.createdAt, at: r.createdAt })),
    ...runRows.map((r) => ({ kind: 'timed step' as const, started: r.created_at.getTime(), at: r.created_at.getTime() })),
    ...caseRows.flatMap((c) => [c.created_at, ...(c.handed_over_at ? [c.handed_over_at] : [])].map((t) => ({ kind: 'timed step' as const, started: t.getTime(), at: t.getTime() }))),
  ];

  return {
    booked,
    committed: events,
    deliveries,
    reminders,
    overdueReminders,
    cases,
    handOvers,
    subscriptions,
    sends,
    series,
    wakeRows: wakeRows.map((r) => ({ service: r.service, key: r.key, due: r.due, parked: r.parked })),
    progress,
    mails: countMails(received.mails),
  };
}
