import { addDays } from '../shared/clock.ts';

/**
 * The dunning engine's decisions, as pure functions of the facts (docs/reminders.md, "The plan"; the law in
 * danish-rules items 1–6). The durable loop (workflows/dunning.ts) only sleeps, asks these, and runs the steps.
 *
 * - `nextStep`: the invoice's next planned step and its date: the free payment reminder, reminder n, a
 *   limitation warning, or (autoCollections) the collect step after the demand letter; null when the lifecycle is over.
 * - `decideFee`: the fee a reminder taken on a date carries (§ 9 b: the cap, 3 per invoice, 3 per continuous
 *   arrears, 10 days apart, none on a time-barred claim).
 * - `arrearsStart`: where the customer's current continuous arrears began.
 *
 * Dates are 'YYYY-MM-DD' business dates (Europe/Copenhagen).
 */

export const FEE_REMINDERS_PER_INVOICE = 3;
export const FEE_REMINDERS_PER_ARREARS = 3;
/** Renteloven § 9 b stk. 2: at least 10 days between fee-bearing reminders; a reminder sent sooner is free. */
export const FEE_INTERVAL_DAYS = 10;
/** A reminder's new payment deadline, and the demand letter's (Inkassoloven § 10: at least 10 days). */
export const DEADLINE_DAYS = 10;
/** Numbered reminders per invoice, ever (spec 3.4), whatever the plan says. */
export const MAX_NUMBERED_REMINDERS = 3;
/** Limitation warnings, days before the claim is time-barred. */
export const LIMITATION_WARNING_DAYS = [90, 30] as const;
export type LimitationWarning = (typeof LIMITATION_WARNING_DAYS)[number];

/** What the plan follows: the organisation's reminder settings (or, later, a pinned reminder flow version). */
export interface ReminderPlanSettings {
  maxReminders: number;
  /** daysAfterDue of reminders 1..3. */
  cadence: { reminderNumber: number; daysAfterDue: number }[];
  paymentReminderEnabled: boolean;
  paymentReminderDays: number;
  /** After the plan's last reminder (the demand letter), collect on its deadline + 1 day if the principal is unpaid. */
  autoCollections?: boolean;
}

export interface TakenReminder {
  type: 'payment_reminder' | 'reminder';
  reminderNumber: number | null;
  feeOere: number;
  sentOn: string;
}

export interface DunningFacts {
  dueDate: string;
  /** The invoice is open (issued or overdue) and not in collections: nothing else is reminded. */
  remindable: boolean;
  /** What is left of the principal (gross − paid − credited, payments covering the principal first). */
  principalOutstandingOere: number;
  /** Reminders taken on this invoice, any source, in the order taken. */
  taken: readonly TakenReminder[];
  /** Limitation warnings already written. */
  warned: readonly LimitationWarning[];
  /**
   * The day the lifecycle began (the invoice's issue date). No step is dated before it: an invoice issued after its
   * due date is not reminded as of days it did not exist (docs/reminders.md, "Decisions the engine takes").
   */
  startedOn?: string;
}

export type PlannedStep =
  | { kind: 'payment_reminder'; date: string }
  | { kind: 'reminder'; reminderNumber: number; date: string; demandLetter: boolean }
  | { kind: 'limitation_warning'; daysBefore: LimitationWarning; date: string }
  /** autoCollections: the hand-over to debt collection (as POST …/collect), the day after the demand letter's deadline. */
  | { kind: 'collect'; date: string };

/** The day a claim due on `dueDate` is time-barred (Forældelsesloven § 3: 3 years; 29 Feb → 28 Feb, the earlier). */
export function timeBarredOn(dueDate: string): string {
  const [y, m, d] = dueDate.split('-').map(Number) as [number, number, number];
  const lastDay = new Date(Date.UTC(y + 3, m, 0)).getUTCDate();
  return `${String(y + 3).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(Math.min(d, lastDay)).padStart(2, '0')}`;
}

export const isTimeBarred = (dueDate: string, on: string): boolean => on >= timeBarredOn(dueDate);

const lastFeeBearing = (taken: readonly TakenReminder[]): TakenReminder | undefined => taken.filter((t) => t.feeOere > 0).at(-1);
const maxDate = (a: string, b: string): string => (a > b ? a : b);

/** The next numbered reminder of the plan with its date, or null when the plan's reminders are all taken. */
export function nextReminder(facts: Pick<DunningFacts, 'dueDate' | 'taken' | 'startedOn'>, settings: ReminderPlanSettings): Extract<PlannedStep, { kind: 'reminder' }> | null {
  const numbered = facts.taken.filter((t) => t.type === 'reminder');
  const n = numbered.length === 0 ? 1 : Math.max(...numbered.map((t) => t.reminderNumber ?? 0)) + 1;
  if (n > settings.maxReminders || n > MAX_NUMBERED_REMINDERS) return null;
  const cadence = settings.cadence.find((c) => c.reminderNumber === n);
  if (!cadence) return null;
  const planned = addDays(facts.dueDate, cadence.daysAfterDue);
  // § 9 b floor: never sooner than 10 days after this invoice's previous fee-bearing reminder.
  const previousFee = lastFeeBearing(facts.taken);
  let date = previousFee ? maxDate(planned, addDays(previousFee.sentOn, FEE_INTERVAL_DAYS)) : planned;
  // A plan that began after this date (issued late) takes the reminder on its first day, and after the previous
  // reminder's deadline: reminders the clamp would gather on one day come DEADLINE_DAYS apart instead.
  if (facts.startedOn !== undefined && date < facts.startedOn) {
    const previous = facts.taken.at(-1);
    date = previous ? maxDate(facts.startedOn, addDays(previous.sentOn, DEADLINE_DAYS)) : facts.startedOn;
  }
  return { kind: 'reminder', reminderNumber: n, date, demandLetter: n === settings.maxReminders };
}

/** The free payment reminder's date, when the plan has one still to take (only before any numbered reminder). */
function nextPaymentReminder(facts: Pick<DunningFacts, 'dueDate' | 'taken' | 'startedOn'>, settings: ReminderPlanSettings): PlannedStep | null {
  if (!settings.paymentReminderEnabled) return null;
  if (facts.taken.some((t) => t.type === 'payment_reminder' || t.type === 'reminder')) return null;
  const planned = addDays(facts.dueDate, settings.paymentReminderDays);
  return { kind: 'payment_reminder', date: facts.startedOn !== undefined ? maxDate(planned, facts.startedOn) : planned };
}

/**
 * With `autoCollections`, once every reminder of the plan is taken (at least one: the demand letter is the plan's
 * last, reminder `maxReminders`), the collect step on the demand letter's deadline + 1 day; none for a claim
 * time-barred by then (collect would refuse it).
 */
function nextCollect(facts: Pick<DunningFacts, 'dueDate' | 'taken'>, settings: ReminderPlanSettings): PlannedStep | null {
  if (!settings.autoCollections || settings.maxReminders < 1) return null;
  const numbered = facts.taken.filter((t) => t.type === 'reminder');
  if (numbered.length < settings.maxReminders) return null;
  const demandLetter = numbered.at(-1)!;
  const date = addDays(demandLetter.sentOn, DEADLINE_DAYS + 1);
  return isTimeBarred(facts.dueDate, date) ? null : { kind: 'collect', date };
}

/**
 * The invoice's next step, earliest first (a limitation warning before a reminder on the same day), or null when
 * nothing is left: the invoice is no longer remindable (paid, in collections), only fees are outstanding, or every
 * step is taken.
 */
export function nextStep(facts: DunningFacts, settings: ReminderPlanSettings): PlannedStep | null {
  if (!facts.remindable || facts.principalOutstandingOere <= 0) return null;
  const barred = timeBarredOn(facts.dueDate);
  const candidates: PlannedStep[] = [];
  for (const daysBefore of LIMITATION_WARNING_DAYS) {
    const date = addDays(barred, -daysBefore);
    // A warning whose day came before the lifecycle began is not written late (nor for a claim already barred).
    if (facts.startedOn !== undefined && date < facts.startedOn) continue;
    if (!facts.warned.includes(daysBefore)) candidates.push({ kind: 'limitation_warning', daysBefore, date });
  }
  const pr = nextPaymentReminder(facts, settings);
  if (pr) candidates.push(pr);
  else {
    const r = nextReminder(facts, settings) ?? nextCollect(facts, settings);
    if (r) candidates.push(r);
  }
  if (candidates.length === 0) return null;
  const order = (s: PlannedStep) => (s.kind === 'limitation_warning' ? 0 : 1);
  return candidates.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : order(a) - order(b)))[0]!;
}

/** The next reminder-type step of the plan (what `meta.nextReminder` shows), ignoring limitation warnings. */
export function nextReminderStep(facts: DunningFacts, settings: ReminderPlanSettings): { type: 'payment_reminder' | 'reminder'; reminderNumber: number | null; date: string } | null {
  if (!facts.remindable || facts.principalOutstandingOere <= 0) return null;
  const pr = nextPaymentReminder(facts, settings);
  if (pr) return { type: 'payment_reminder', reminderNumber: null, date: pr.date };
  const r = nextReminder(facts, settings);
  return r ? { type: 'reminder', reminderNumber: r.reminderNumber, date: r.date } : null;
}

export interface FeeFacts {
  /** The organisation's fee (the statutory cap when its setting is null). */
  effectiveFeeOere: number;
  dueDate: string;
  /** Reminders taken on this invoice before this one. */
  taken: readonly TakenReminder[];
  /** Fee-bearing reminders sent to the customer (any invoice) since their current continuous arrears began. */
  arrearsFeeReminders: number;
}

export type FeeDecision = { feeOere: number; reason: 'charged' | 'no_fee_configured' | 'invoice_cap' | 'arrears_cap' | 'too_soon' | 'time_barred' };

/** The fee of a numbered reminder taken on `on` (danish-rules item 1). The payment reminder is always free. */
export function decideFee(facts: FeeFacts, on: string): FeeDecision {
  if (isTimeBarred(facts.dueDate, on)) return { feeOere: 0, reason: 'time_barred' };
  if (facts.effectiveFeeOere <= 0) return { feeOere: 0, reason: 'no_fee_configured' };
  const feeBearing = facts.taken.filter((t) => t.feeOere > 0);
  if (feeBearing.length >= FEE_REMINDERS_PER_INVOICE) return { feeOere: 0, reason: 'invoice_cap' };
  if (facts.arrearsFeeReminders >= FEE_REMINDERS_PER_ARREARS) return { feeOere: 0, reason: 'arrears_cap' };
  const previous = feeBearing.at(-1);
  if (previous && on < addDays(previous.sentOn, FEE_INTERVAL_DAYS)) return { feeOere: 0, reason: 'too_soon' };
  return { feeOere: facts.effectiveFeeOere, reason: 'charged' };
}

/**
 * One invoice's overdue stretch: from the day after its due date until the day its balance reached 0
 * (`settledOn`, exclusive), or still open (null).
 */
export interface OverdueInterval {
  from: string;
  until: string | null;
}

/**
 * The first day of the customer's continuous arrears that contains `on`: the overdue stretches of their invoices
 * merged where they overlap or touch (a day with no overdue invoice ends the arrears). Null when the customer is not
 * in arrears on `on`.
 */
export function arrearsStart(intervals: readonly OverdueInterval[], on: string): string | null {
  const relevant = intervals.filter((i) => i.from <= on && i.until !== i.from).sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  let start: string | null = null;
  let end: string | null = null; // exclusive; null = open
  let covering: string | null = null;
  for (const i of relevant) {
    const joins = start !== null && (end === null || i.from <= end);
    if (!joins) {
      start = i.from;
      end = i.until;
    } else if (end !== null) {
      end = i.until === null ? null : maxDate(end, i.until);
    }
    if (end === null || on < end) covering = start;
    else covering = null;
  }
  return covering;
}
