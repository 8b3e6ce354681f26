/**
 * The fault drill's verdicts: pure functions from what the drill saw (its own answers, the receivers' records) and
 * what PostgreSQL holds afterwards to one row each of the printed table. Nothing here reads a clock or a database,
 * so test/unit/drill-checks.test.ts shows every check failing on a doctored input: a check that cannot fail proves
 * nothing.
 */

/** One row of the drill's table: what was measured, what it must be, and what did not hold. */
export interface Verdict {
  check: string;
  measured: string;
  target: string;
  ok: boolean;
  /** One line per thing that did not hold, naming it (a key, an id, a number). */
  problems: string[];
}

const verdict = (check: string, target: string, measured: string, problems: string[]): Verdict => ({
  check,
  measured,
  target,
  ok: problems.length === 0,
  problems,
});

const countBy = <T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> => {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
};

// --- Payments ---------------------------------------------------------------------------------------------------

/** A 2xx answer to a payment registration: the key it was sent with and the payment the service said it booked. */
export interface AcknowledgedPayment {
  key: string;
  paymentId: string;
  amountOere: number;
}

/** A row of the payments table, booked on its Idempotency-Key. */
export interface BookedPayment {
  key: string;
  paymentId: string;
  amountOere: number;
}

/**
 * Every acknowledged payment is booked once, with the amount sent (0 lost), and nothing is booked that no answer
 * accounts for (0 doubled): a retry, deliberate or after a connection error, must answer with the payment the first
 * attempt booked. `unanswered` are keys the driver gave up on without a 2xx; the driver retries until it gets one, so
 * any is a failure of its own (the service stopped answering for good), and their bookings are not counted as doubled.
 */
export function checkPayments(acks: readonly AcknowledgedPayment[], booked: readonly BookedPayment[], unanswered: readonly string[]): Verdict {
  const problems: string[] = [];
  const bookedByKey = countBy(booked, (b) => b.key);
  const acksByKey = countBy(acks, (a) => a.key);
  let lost = 0;
  let doubled = 0;
  for (const [key, answers] of acksByKey) {
    const ids = new Set(answers.map((a) => a.paymentId));
    if (ids.size > 1) {
      doubled++;
      problems.push(`key ${key} was answered with ${ids.size} different payments: ${[...ids].join(', ')}`);
    }
    const rows = bookedByKey.get(key) ?? [];
    if (rows.length === 0) {
      lost++;
      problems.push(`key ${key} was acknowledged (payment ${answers[0]!.paymentId}) but nothing is booked`);
      continue;
    }
    if (!rows.some((r) => ids.has(r.paymentId))) {
      lost++;
      problems.push(`key ${key} was acknowledged as payment ${answers[0]!.paymentId}, which is not booked (booked: ${rows.map((r) => r.paymentId).join(', ')})`);
    }
    const wrong = rows.find((r) => r.amountOere !== answers[0]!.amountOere);
    if (wrong) problems.push(`key ${key}: ${answers[0]!.amountOere} øre acknowledged, ${wrong.amountOere} øre booked`);
  }
  const gaveUp = new Set(unanswered);
  for (const [key, rows] of bookedByKey) {
    if (rows.length > 1) {
      doubled++;
      problems.push(`key ${key} is booked ${rows.length} times: ${rows.map((r) => r.paymentId).join(', ')}`);
    } else if (!acksByKey.has(key) && !gaveUp.has(key)) {
      doubled++;
      problems.push(`payment ${rows[0]!.paymentId} (key ${key}) is booked but was never acknowledged`);
    }
  }
  for (const key of gaveUp) problems.push(`key ${key} never got a 2xx answer (${bookedByKey.has(key) ? 'booked' : 'not booked'})`);
  const measured = `${acksByKey.size} acknowledged, ${booked.length} booked: ${lost} lost, ${doubled} doubled` + (gaveUp.size ? `, ${gaveUp.size} unanswered` : '');
  return verdict('payments acknowledged vs booked', '0 lost, 0 doubled', measured, problems);
}

// --- Events and webhooks ----------------------------------------------------------------------------------------

/** An event in the log, of an organisation whose endpoint takes every type. */
export interface CommittedEvent {
  id: string;
  type: string;
}

/** One POST the webhook receiver got: its `webhook-id` header and the `id` in its body. */
export interface WebhookDelivery {
  webhookId: string;
  eventId: string;
}

/**
 * Every committed event reaches the receiver (0 lost). Delivery is at least once, so an event may arrive more than
 * once, but only under one webhook id, the event's own, which is what a receiver de-duplicates on; anything the
 * receiver got that is not in the log is a failure too.
 */
export function checkEvents(committed: readonly CommittedEvent[], deliveries: readonly WebhookDelivery[]): Verdict {
  const problems: string[] = [];
  const byEvent = countBy(deliveries, (d) => d.eventId);
  const known = new Set(committed.map((e) => e.id));
  let lost = 0;
  let repeated = 0;
  for (const e of committed) {
    const got = byEvent.get(e.id);
    if (!got) {
      lost++;
      problems.push(`event ${e.id} (${e.type}) was committed but never delivered`);
      continue;
    }
    if (got.length > 1) repeated += got.length - 1;
    const foreign = got.filter((d) => d.webhookId !== e.id);
    if (foreign.length) problems.push(`event ${e.id} (${e.type}) arrived under webhook id ${foreign.map((d) => d.webhookId).join(', ')}`);
  }
  for (const [eventId, got] of byEvent) {
    if (!known.has(eventId)) problems.push(`the receiver got ${got.length} deliveries of ${eventId}, which is not in the event log`);
  }
  const measured = `${committed.length} committed, ${byEvent.size} delivered: ${lost} lost, ${repeated} repeated` + (repeated ? ' (same webhook id)' : '');
  return verdict('events committed vs delivered', '0 lost; repeats only with the same webhook id', measured, problems);
}

// --- Mails ------------------------------------------------------------------------------------------------------

/**
 * How many messages the SMTP sink took per Message-ID. The service derives a document's Message-ID from the document
 * (`reminder-<id>@…`, `<invoiceId>.invoice@…`, `case-paakrav-<caseId>@…`), so a send repeated after a crash is the
 * same message, which a mail server and client de-duplicate on: one Message-ID is one mail, however often it came.
 */
export type MailCounts = ReadonlyMap<string, number>;

/** The Message-IDs whose left part is `local` (any domain). */
const mailsTo = (mails: MailCounts, local: string): number => {
  let n = 0;
  for (const id of mails.keys()) if (id.startsWith(`${local}@`)) n++;
  return n;
};

// --- Reminders --------------------------------------------------------------------------------------------------

export interface ReminderFact {
  id: string;
  invoiceId: string;
  /** `reminder 1`…`reminder 3` or `payment reminder`. */
  step: string;
  channel: string | null;
  status: string;
  /** `pending` until its mail or letter has gone out. */
  delivery: string;
}

/** An invoice whose next reminder step, as the API plans it, was due and not taken when the drill ended. */
export interface OverdueReminder {
  invoiceId: string;
  step: string;
  date: string;
  today: string;
}

/**
 * Every reminder exactly once: one row per invoice and step, none of the plan's steps left behind (the API's own
 * `nextReminder` is not in the past), and each e-mailed reminder's mail sent as exactly one message.
 */
export function checkReminders(reminders: readonly ReminderFact[], overdue: readonly OverdueReminder[], mails: MailCounts): Verdict {
  const problems: string[] = [];
  for (const [key, rows] of countBy(reminders, (r) => `${r.invoiceId} ${r.step}`)) {
    if (rows.length > 1) problems.push(`invoice ${key} was taken ${rows.length} times`);
  }
  for (const o of overdue) problems.push(`invoice ${o.invoiceId}: ${o.step} was due on ${o.date} and not taken by ${o.today}`);
  let mailed = 0;
  for (const r of reminders) {
    if (r.status !== 'sent') continue;
    if (r.delivery === 'pending') problems.push(`reminder ${r.id} (${r.step} of ${r.invoiceId}) is still waiting for its ${r.channel}`);
    if (r.channel !== 'email') continue;
    const n = mailsTo(mails, `reminder-${r.id}`);
    mailed += n;
    if (n !== 1) problems.push(`reminder ${r.id} (${r.step} of ${r.invoiceId}) was mailed as ${n} messages`);
  }
  const measured = `${reminders.length} taken, ${mailed} mailed, ${overdue.length} overdue`;
  return verdict('reminders exactly once', 'one per step, none overdue, one mail each', measured, problems);
}

// --- Collection cases -------------------------------------------------------------------------------------------

export interface CaseFact {
  id: string;
  state: string;
  /** `handed_over_at` is set. */
  handedOver: boolean;
  /** In `PAAKRAV_SENDT` with its hand-over day on or before the organisation's today: a step left behind. */
  handOverDue: boolean;
  /** The case's `sag.*` events, in order. */
  eventTypes: string[];
}

/** A hand-over the collection partner's receiver got: the case in its body and its hand-over id. */
export interface HandOverFact {
  caseId: string;
  handOverId: string;
}

/** Transitions a case takes at most once; `sag.status_aendret` and `sag.betaling_modtaget` may repeat. */
const ONCE_PER_CASE = ['sag.oprettet', 'sag.paakrav_sendt', 'sag.overdraget', 'sag.afsluttet', 'sag.tilbagekaldt'];

/**
 * Every case step exactly once: each transition's event at most once, the hand-over received by the partner once
 * (one hand-over id; a repeat of that id is the same hand-over) for a handed-over case and never for another, no
 * hand-over day passed without it, and a påkrav of its own mailed at most once.
 */
export function checkCaseSteps(cases: readonly CaseFact[], handOvers: readonly HandOverFact[], mails: MailCounts): Verdict {
  const problems: string[] = [];
  const byCase = countBy(handOvers, (h) => h.caseId);
  const known = new Set(cases.map((c) => c.id));
  let steps = 0;
  for (const c of cases) {
    for (const type of ONCE_PER_CASE) {
      const n = c.eventTypes.filter((t) => t === type).length;
      steps += n;
      if (n > 1) problems.push(`case ${c.id}: ${type} ${n} times`);
    }
    const ids = new Set((byCase.get(c.id) ?? []).map((h) => h.handOverId));
    if (c.handedOver && ids.size !== 1) problems.push(`case ${c.id} is handed over, and the partner got ${ids.size} hand-overs`);
    if (!c.handedOver && ids.size > 0) problems.push(`case ${c.id} is ${c.state}, and the partner got ${ids.size} hand-overs`);
    if (c.handOverDue) problems.push(`case ${c.id}: the hand-over day has passed and it is still ${c.state}`);
    const paakrav = mailsTo(mails, `case-paakrav-${c.id}`);
    if (paakrav > 1) problems.push(`case ${c.id}: its påkrav was mailed as ${paakrav} messages`);
  }
  for (const caseId of byCase.keys()) if (!known.has(caseId)) problems.push(`the partner got a hand-over of ${caseId}, which is no case of the drill`);
  const handedOver = cases.filter((c) => c.handedOver).length;
  const measured = `${cases.length} cases, ${steps} steps, ${handedOver} handed over`;
  return verdict('case steps exactly once', 'each step once, none overdue', measured, problems);
}

// --- Subscription periods ---------------------------------------------------------------------------------------

export interface SubscriptionFact {
  id: string;
  /** The period indexes of its run receipts, as stored. */
  runs: number[];
  /** The invoices of each period start, as stored (the unique index allows one). */
  invoicesPerPeriod: ReadonlyMap<string, number>;
  /** Invoices of its periods not issued yet (a number reserved, the PDF not stored). */
  unissued: number;
  /** Periods started on or before the organisation's today that have no run: left behind. */
  periodsBehind: number;
  /** The invoice of each run, for its mail (when it was to be sent). */
  mailedInvoices: string[];
}

/** Every subscription period exactly once: runs 0…n−1 each once, one issued invoice each, mailed once, none behind. */
export function checkSubscriptionPeriods(subscriptions: readonly SubscriptionFact[], mails: MailCounts): Verdict {
  const problems: string[] = [];
  let periods = 0;
  for (const s of subscriptions) {
    periods += s.runs.length;
    const sorted = [...s.runs].sort((a, b) => a - b);
    const expected = sorted.map((_, i) => i);
    if (sorted.some((p, i) => p !== expected[i])) problems.push(`subscription ${s.id}: periods ${sorted.join(',')} run, not 0…${sorted.length - 1} once each`);
    for (const [start, n] of s.invoicesPerPeriod) if (n !== 1) problems.push(`subscription ${s.id}: the period from ${start} has ${n} invoices`);
    if (s.invoicesPerPeriod.size !== s.runs.length) problems.push(`subscription ${s.id}: ${s.runs.length} runs but ${s.invoicesPerPeriod.size} periods invoiced`);
    if (s.unissued > 0) problems.push(`subscription ${s.id}: ${s.unissued} period invoices not issued`);
    if (s.periodsBehind > 0) problems.push(`subscription ${s.id}: ${s.periodsBehind} periods due and not run`);
    for (const invoiceId of s.mailedInvoices) {
      const n = mailsTo(mails, `${invoiceId}.invoice`);
      if (n !== 1) problems.push(`subscription ${s.id}: the invoice ${invoiceId} was mailed as ${n} messages`);
    }
  }
  const measured = `${subscriptions.length} subscriptions, ${periods} periods`;
  return verdict('subscription periods exactly once', 'each period once, none behind', measured, problems);
}

// --- Invoice mails ----------------------------------------------------------------------------------------------

/** Every invoice whose send was recorded as sent went out as exactly one message; none is still queued. */
export function checkInvoiceMails(sends: readonly { invoiceId: string; status: string }[], mails: MailCounts): Verdict {
  const problems: string[] = [];
  let sent = 0;
  for (const s of sends) {
    if (s.status === 'queued') problems.push(`invoice ${s.invoiceId}: its mail is still queued`);
    if (s.status !== 'sent' && s.status !== 'delivered') continue;
    sent++;
    const n = mailsTo(mails, `${s.invoiceId}.invoice`);
    if (n !== 1) problems.push(`invoice ${s.invoiceId} was mailed as ${n} messages`);
  }
  return verdict('invoice mails exactly once', 'one message per sent invoice', `${sends.length} sends, ${sent} sent`, problems);
}

// --- Number series ----------------------------------------------------------------------------------------------

export interface NumberSeriesFact {
  organization: string;
  /** The numbers of its issued invoices and credit notes. */
  numbers: number[];
  /** number_series.next_number. */
  nextNumber: number;
}

/** Each organisation's series is 1…n with every number used once and the next one n + 1. */
export function checkNumberSeries(series: readonly NumberSeriesFact[]): Verdict {
  const problems: string[] = [];
  let total = 0;
  for (const s of series) {
    total += s.numbers.length;
    const sorted = [...s.numbers].sort((a, b) => a - b);
    const missing: number[] = [];
    const twice: number[] = [];
    let expected = 1;
    for (const n of sorted) {
      if (n < expected) twice.push(n);
      else {
        while (expected < n) missing.push(expected++);
        expected = n + 1;
      }
    }
    if (missing.length) problems.push(`${s.organization}: numbers ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ', …' : ''} missing`);
    if (twice.length) problems.push(`${s.organization}: numbers ${twice.join(', ')} used twice`);
    if (s.nextNumber !== expected) problems.push(`${s.organization}: the next number is ${s.nextNumber}, the series ends at ${expected - 1}`);
  }
  const measured = `${series.length} series, ${total} numbers`;
  return verdict('number series without gaps', '1…n, next n + 1', measured, problems);
}

// --- Durable work left ------------------------------------------------------------------------------------------

export interface WakeRowFact {
  service: string;
  key: string;
  /** Due on or before the organisation's business now. */
  due: boolean;
  parked: boolean;
}

/** After the drill settled, nothing is due and unstarted, and nothing is parked: no step was dropped on the floor. */
export function checkNothingLeft(rows: readonly WakeRowFact[]): Verdict {
  const problems = rows.filter((r) => r.due || r.parked).map((r) => `${r.service} ${r.key} is ${r.parked ? 'parked' : 'due and not started'}`);
  const parked = rows.filter((r) => r.parked).length;
  const due = rows.filter((r) => r.due && !r.parked).length;
  return verdict('durable work left behind', 'none due, none parked', `${due} due, ${parked} parked, ${rows.length - due - parked} waiting for later`, problems);
}

// --- The load's answers ---------------------------------------------------------------------------------------

/** Every answer the load got was 2xx or a reason to send again (a 5xx, 429, 409 in progress): a refusal is wrong. */
export function checkRefusals(refused: readonly string[]): Verdict {
  return verdict('requests answered as the contract says', '0 refused', `${refused.length} refused`, [...refused]);
}

// --- Time -------------------------------------------------------------------------------------------------------

/** Seconds with one decimal. */
export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/**
 * The longest stretch in which the API answered nothing: the largest gap between successive successful pings
 * (`answers`, times in ms), counting from the start of the load to its end.
 */
export function longestSilence(answers: readonly number[], from: number, to: number): { ms: number; at: number } {
  const times = [from, ...[...answers].sort((a, b) => a - b).filter((t) => t >= from && t <= to), to];
  let best = { ms: 0, at: from };
  for (let i = 1; i < times.length; i++) {
    const gap = times[i]! - times[i - 1]!;
    if (gap > best.ms) best = { ms: gap, at: times[i - 1]! };
  }
  return best;
}

export function checkSilence(answers: readonly number[], from: number, to: number, limitMs: number): Verdict {
  const { ms, at } = longestSilence(answers, from, to);
  const problems = ms > limitMs ? [`the API answered nothing for ${seconds(ms)} from ${seconds(at - from)} into the load`] : [];
  return verdict('longest API silence', `≤ ${seconds(limitMs)}`, `${seconds(ms)} (at +${seconds(at - from)})`, problems);
}

/** A kill the drill made, at `at` (ms). */
export interface Kill {
  what: string;
  at: number;
}

/**
 * A piece of durable work finished: a webhook delivery (`started` when its event was committed) or a timed step
 * (a reminder, a subscription period, a case step; `started` = `at` = when its row was committed).
 */
export interface Progress {
  kind: 'webhook' | 'timed step';
  started: number;
  at: number;
}

/**
 * The time until durable work moved again after a kill: for each kind, the first work begun after the kill that
 * finished, and of those the later one, so both the event pipeline and the engine's timed steps must have moved.
 * A kind that never moved after the kill fails.
 */
export function checkProgress(kill: Kill, progress: readonly Progress[], limitMs: number): Verdict {
  const problems: string[] = [];
  const times: string[] = [];
  let worst = 0;
  for (const kind of ['webhook', 'timed step'] as const) {
    const after = progress.filter((p) => p.kind === kind && p.started > kill.at).map((p) => p.at - kill.at);
    if (after.length === 0) {
      problems.push(`no ${kind} begun after the ${kill.what} kill finished`);
      times.push(`${kind} never`);
      continue;
    }
    const first = Math.min(...after);
    worst = Math.max(worst, first);
    times.push(`${kind} ${seconds(first)}`);
  }
  if (problems.length === 0 && worst > limitMs) problems.push(`durable work moved again only ${seconds(worst)} after the ${kill.what} kill`);
  return verdict(`durable progress after the ${kill.what} kill`, `≤ ${seconds(limitMs)}`, times.join(', '), problems);
}
