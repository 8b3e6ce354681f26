import {
  FEE_REMINDERS_PER_ARREARS,
  COMPENSATION_OERE,
  FEE_REMINDERS_PER_INVOICE,
  handOverDay,
  isTimeBarred,
  LAW,
  MAX_NUMBERED_REMINDERS,
  nextFeeAllowedOn,
  paakravDeadline,
  type Rule,
  STATUTORY_FEE_OERE,
  timeBarredOn,
} from '../law/danish-law.ts';
import { addDays } from '../shared/clock.ts';

/**
 * The dunning engine's decisions, as pure functions of the facts (docs/reminders.md, "The plan"; the law it follows
 * in "The law"). The durable loop (workflows/dunning.ts) holds no timer and decides nothing: woken through the
 * invoice's wake-index row, it takes the due steps (take-due-dunning-step.ts asks these), then renders and delivers
 * each reminder taken.
 *
 * - `nextStep`: the invoice's next planned step and its date: the free payment reminder, reminder n, a
 *   limitation warning, or the collect step after the demand letter; null when the lifecycle is over. The plan is one
 *   shape (`ReminderPlan`) whatever its source: the reminder settings, or the flow version the invoice is pinned to.
 * - `decideFee`: the fee a reminder taken on a date carries (§ 9 b: the cap, 3 per invoice, 3 per continuous
 *   arrears, 10 days apart, none on a time-barred claim).
 * - `arrearsStart`: where the customer's current continuous arrears began.
 * - `decideStep` and `feeRule`: the rule behind a step's date and fee (the law's, `LAW`, or the plan's,
 *   `PLAN_RULES`), which the taken step's journaled result names (`StepRule`, danish-law.ts).
 *
 * Dates are 'YYYY-MM-DD' business dates (Europe/Copenhagen).
 */

// ---------------------------------------------------------------------------------------------------------------
// The rules a step cites

/** The plan's own rules, beside the law's (`LAW`): what the settings or the pinned flow say, and the engine's decisions. */
export const PLAN_RULES = {
  planDate: {
    id: 'plan-days-after-due',
    text: "The plan: the step's day is the due date + its daysAfterDue (the reminder settings, or the reminder flow the invoice is pinned to).",
  },
  startedLate: {
    id: 'plan-not-before-issue',
    text: "No step is dated before the invoice was issued: a step whose day had passed at issue is taken on the issue day, a reminder after the previous one's deadline.",
  },
  paymentReminderFree: { id: 'plan-payment-reminder-free', text: 'The payment reminder, before the numbered reminders, is always free.' },
  noFee: { id: 'plan-no-fee', text: 'The plan charges no fee for this reminder.' },
  planBreaks: {
    id: 'payment-plan-breaks',
    text: 'A payment plan is active: no reminder is taken. It breaks when an instalment is still not fully paid 10 days after its due date.',
  },
  planEnded: {
    id: 'payment-plan-ended',
    text: 'A payment plan was broken or cancelled: dunning resumes on the day it ended, no step dated before it.',
  },
  undeliverable: {
    id: 'no-channel-no-fee',
    text: 'The customer can be reached by none of the channels the plan allows: the reminder counts as taken and charges nothing.',
  },
} as const satisfies Record<string, Rule>;

/** Limitation warnings, days before the claim is time-barred. */

export const LIMITATION_WARNING_DAYS = [90, 30] as const;
export type LimitationWarning = (typeof LIMITATION_WARNING_DAYS)[number];

/** The organisation's reminder settings as the plan reads them (an unpinned invoice's plan source). */
export interface ReminderPlanSettings {
  maxReminders: number;
  /** daysAfterDue of reminders 1..3. */
  cadence: { reminderNumber: number; daysAfterDue: number }[];
  paymentReminderEnabled: boolean;
  paymentReminderDays: number;
  /** After the plan's last reminder (the demand letter), collect on its deadline + 1 day if the principal is unpaid. */
  autoCollections?: boolean;
  /** The organisation's fee; null or absent: the statutory cap. */
  feeOere?: number | null;
  /** A letter when the customer has no e-mail address (otherwise e-mail only). */
  letterFallback?: boolean;
}

export type PlanFee = number | 'statutory';
export type PlanChannel = 'email' | 'letter' | 'email_or_letter';
export type CustomerType = 'person' | 'company';

/** One step of a plan, in the order taken. `fee` binds reminder steps only (the payment reminder is always free). */
export interface PlanStep {
  action: 'payment_reminder' | 'reminder' | 'collections';
  /**
   * Days after the due date. A reminder is never planned sooner than 10 days after the previous fee-bearing one, and
   * the collect step never before the demand letter's deadline has passed (its sent date + 11).
   */
  daysAfterDue: number;
  fee: PlanFee;
  channel: PlanChannel;
}

/**
 * What an invoice's dunning follows, one shape for both sources: the organisation's reminder settings (an unpinned
 * invoice, `planFromSettings`) or the reminder flow version the invoice was pinned to at issue, its steps for the
 * customer's type (`planFromGraph`). The law binds it whatever it says (`nextStep`, `decideFee`).
 */
export interface ReminderPlan {
  steps: PlanStep[];
  /** The fee and channel of a numbered reminder beyond the plan's reminder steps (a manual one). */
  beyond: { fee: PlanFee; channel: PlanChannel };
}

/** The settings as a plan: the payment reminder, reminders 1..maxReminders of the cadence, the collect step. */
export function planFromSettings(settings: ReminderPlanSettings): ReminderPlan {
  const fee: PlanFee = settings.feeOere ?? 'statutory';
  const channel: PlanChannel = settings.letterFallback ? 'email_or_letter' : 'email';
  const steps: PlanStep[] = [];
  if (settings.paymentReminderEnabled) steps.push({ action: 'payment_reminder', daysAfterDue: settings.paymentReminderDays, fee: 0, channel });
  let reminders = 0;
  for (let n = 1; n <= Math.min(settings.maxReminders, MAX_NUMBERED_REMINDERS); n++) {
    const cadence = settings.cadence.find((c) => c.reminderNumber === n);
    if (!cadence) break;
    steps.push({ action: 'reminder', daysAfterDue: cadence.daysAfterDue, fee, channel });
    reminders++;
  }
  // Day 0: the collect step's own floor, the demand letter's deadline + 1 day, is its date.
  if (settings.autoCollections && reminders > 0) steps.push({ action: 'collections', daysAfterDue: 0, fee: 0, channel });
  return { steps, beyond: { fee, channel } };
}

/** A flow graph's step as stored (defaults filled in; contracts/reminder-flows.ts). */
export interface GraphStep {
  action: 'payment_reminder' | 'reminder' | 'collections';
  daysAfterDue: number;
  fee?: PlanFee;
  channel?: PlanChannel;
  when?: { customerType?: CustomerType };
}

/** A pinned flow version's graph as the plan for a customer of `customerType`: the steps that apply to it, in order. */
export function planFromGraph(graph: { steps: readonly GraphStep[] }, customerType: CustomerType): ReminderPlan {
  const steps = graph.steps
    .filter((s) => s.when?.customerType === undefined || s.when.customerType === customerType)
    .map(
      (s): PlanStep => ({
        action: s.action,
        daysAfterDue: s.daysAfterDue,
        fee: s.action === 'reminder' ? (s.fee ?? 'statutory') : 0,
        channel: s.channel ?? 'email_or_letter',
      }),
    );
  const last = steps.filter((s) => s.action === 'reminder').at(-1);
  return { steps, beyond: last ? { fee: last.fee, channel: last.channel } : { fee: 'statutory', channel: 'email_or_letter' } };
}

/** What nextStep plans with: a plan, or the settings (read as `planFromSettings`). */
export type PlanSource = ReminderPlan | ReminderPlanSettings;
export const toPlan = (source: PlanSource): ReminderPlan => ('steps' in source ? source : planFromSettings(source));

const reminderSteps = (plan: ReminderPlan): PlanStep[] => plan.steps.filter((s) => s.action === 'reminder');

/** The plan's number of numbered reminders (the last is the demand letter; `meta.maxReminders`). */
export const planReminderCount = (source: PlanSource): number => Math.min(reminderSteps(toPlan(source)).length, MAX_NUMBERED_REMINDERS);

/** The fee in øre a fee rule means. */
export const feeOere = (fee: PlanFee): number => (fee === 'statutory' ? STATUTORY_FEE_OERE : fee);

/** The fee and channel a step of the plan is taken with: the payment reminder's (free), or reminder n's. */
export function stepRule(source: PlanSource, step: { type: 'payment_reminder' | 'reminder'; reminderNumber: number | null }): { feeOere: number; channel: PlanChannel } {
  const plan = toPlan(source);
  if (step.type === 'payment_reminder') {
    const pr = plan.steps.find((s) => s.action === 'payment_reminder');
    return { feeOere: 0, channel: pr?.channel ?? plan.beyond.channel };
  }
  const s = reminderSteps(plan)[(step.reminderNumber ?? 1) - 1] ?? plan.beyond;
  return { feeOere: feeOere(s.fee), channel: s.channel };
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
  /**
   * An active payment plan (docs/reminders.md, "Payment plans"): dunning takes no step while it lasts; its only step
   * is breaking it on `breaksOn` (an instalment's due date + 10 days while that instalment is not fully paid).
   */
  activePlan?: { breaksOn: string | null };
  /** The day the invoice's latest broken or cancelled payment plan ended: dunning resumes then, no step is dated before it. */
  resumesOn?: string;
}

export type PlannedStep =
  | { kind: 'payment_reminder'; date: string }
  | { kind: 'reminder'; reminderNumber: number; date: string; demandLetter: boolean }
  | { kind: 'limitation_warning'; daysBefore: LimitationWarning; date: string }
  /** autoCollections: the hand-over to debt collection (as POST …/collect), the day after the demand letter's deadline. */
  | { kind: 'collect'; date: string }
  /** The active payment plan breaks: an instalment is still not fully paid 10 days after its due date. */
  | { kind: 'break_plan'; date: string };

const lastFeeBearing = (taken: readonly TakenReminder[]): TakenReminder | undefined => taken.filter((t) => t.feeOere > 0).at(-1);
const maxDate = (a: string, b: string): string => (a > b ? a : b);

/** A planned step with the rule that decided its date. */
export interface Decided<S extends PlannedStep = PlannedStep> {
  step: S;
  dateRule: Rule;
}

/** The next numbered reminder of the plan with its date, or null when the plan's reminders are all taken. */
export function nextReminder(facts: Pick<DunningFacts, 'dueDate' | 'taken' | 'startedOn'>, source: PlanSource): Extract<PlannedStep, { kind: 'reminder' }> | null {
  return decideReminder(facts, source)?.step ?? null;
}

function decideReminder(facts: Pick<DunningFacts, 'dueDate' | 'taken' | 'startedOn'>, source: PlanSource): Decided<Extract<PlannedStep, { kind: 'reminder' }>> | null {
  const plan = toPlan(source);
  const steps = reminderSteps(plan);
  const count = planReminderCount(plan);
  const numbered = facts.taken.filter((t) => t.type === 'reminder');
  const n = numbered.length === 0 ? 1 : Math.max(...numbered.map((t) => t.reminderNumber ?? 0)) + 1;
  if (n > count) return null;
  const step = steps[n - 1]!;
  let date = addDays(facts.dueDate, step.daysAfterDue);
  let dateRule: Rule = PLAN_RULES.planDate;
  // § 9 b floor: never sooner than 10 days after this invoice's previous fee-bearing reminder.
  const previousFee = lastFeeBearing(facts.taken);
  const floor = previousFee && nextFeeAllowedOn(previousFee.sentOn);
  if (floor && floor > date) {
    date = floor;
    dateRule = LAW.feeInterval;
  }
  // A plan that began after this date (issued late) takes the reminder on its first day, and after the previous
  // reminder's deadline: reminders the clamp would gather on one day come a deadline apart instead.
  if (facts.startedOn !== undefined && date < facts.startedOn) {
    const previous = facts.taken.at(-1);
    date = previous ? maxDate(facts.startedOn, paakravDeadline(previous.sentOn)) : facts.startedOn;
    dateRule = PLAN_RULES.startedLate;
  }
  return { step: { kind: 'reminder', reminderNumber: n, date, demandLetter: n === count }, dateRule };
}

/** The free payment reminder's date, when the plan has one still to take (only before any numbered reminder). */
function nextPaymentReminder(facts: Pick<DunningFacts, 'dueDate' | 'taken' | 'startedOn'>, plan: ReminderPlan): Decided | null {
  const step = plan.steps.find((s) => s.action === 'payment_reminder');
  if (!step) return null;
  if (facts.taken.some((t) => t.type === 'payment_reminder' || t.type === 'reminder')) return null;
  const planned = addDays(facts.dueDate, step.daysAfterDue);
  return facts.startedOn !== undefined && facts.startedOn > planned
    ? { step: { kind: 'payment_reminder', date: facts.startedOn }, dateRule: PLAN_RULES.startedLate }
    : { step: { kind: 'payment_reminder', date: planned }, dateRule: PLAN_RULES.planDate };
}

/**
 * With a collections step (the settings' `autoCollections`, or a flow's `collections`), once every reminder of the
 * plan is taken (the demand letter is the plan's last), the collect step on the due date + its `daysAfterDue`, never
 * before the demand letter's deadline + 1 day (the settings' collect step is exactly that); none for a claim
 * time-barred by then (collect would refuse it).
 */
function nextCollect(facts: Pick<DunningFacts, 'dueDate' | 'taken' | 'startedOn'>, plan: ReminderPlan): Decided | null {
  const step = plan.steps.find((s) => s.action === 'collections');
  if (!step) return null;
  const numbered = facts.taken.filter((t) => t.type === 'reminder');
  if (numbered.length < planReminderCount(plan)) return null;
  let date = addDays(facts.dueDate, step.daysAfterDue);
  let dateRule: Rule = PLAN_RULES.planDate;
  const demandLetter = numbered.at(-1);
  if (demandLetter && handOverDay(demandLetter.sentOn) > date) {
    date = handOverDay(demandLetter.sentOn);
    dateRule = LAW.handOver;
  }
  if (facts.startedOn !== undefined && facts.startedOn > date) {
    date = facts.startedOn;
    dateRule = PLAN_RULES.startedLate;
  }
  return isTimeBarred(facts.dueDate, date) ? null : { step: { kind: 'collect', date }, dateRule };
}

/**
 * The invoice's next step, earliest first (a limitation warning before a reminder on the same day), or null when
 * nothing is left: the invoice is no longer remindable (paid, in collections), only fees are outstanding, or every
 * step is taken.
 */
export function nextStep(facts: DunningFacts, source: PlanSource): PlannedStep | null {
  return decideStep(facts, source)?.step ?? null;
}

/** `nextStep` with the rule that decided its date (what the taken step's journaled result cites). */
export function decideStep(facts: DunningFacts, source: PlanSource): Decided | null {
  const plan = toPlan(source);
  if (!facts.remindable || facts.principalOutstandingOere <= 0) return null;
  // An active payment plan pauses every step; the only one left is its break.
  if (facts.activePlan) {
    return facts.activePlan.breaksOn === null ? null : { step: { kind: 'break_plan', date: facts.activePlan.breaksOn }, dateRule: PLAN_RULES.planBreaks };
  }
  const decided = decideUnpaused(facts, plan);
  // After a broken or cancelled plan, dunning resumes on its end date at the earliest (every other rule still holds).
  if (decided && facts.resumesOn !== undefined && decided.step.date < facts.resumesOn) {
    return { step: { ...decided.step, date: facts.resumesOn }, dateRule: PLAN_RULES.planEnded };
  }
  return decided;
}

function decideUnpaused(facts: DunningFacts, plan: ReminderPlan): Decided | null {
  const barred = timeBarredOn(facts.dueDate);
  const candidates: Decided[] = [];
  for (const daysBefore of LIMITATION_WARNING_DAYS) {
    const date = addDays(barred, -daysBefore);
    // A warning whose day came before the lifecycle began is not written late (nor for a claim already barred).
    if (facts.startedOn !== undefined && date < facts.startedOn) continue;
    if (!facts.warned.includes(daysBefore)) candidates.push({ step: { kind: 'limitation_warning', daysBefore, date }, dateRule: LAW.limitation });
  }
  const pr = nextPaymentReminder(facts, plan);
  if (pr) candidates.push(pr);
  else {
    const r = decideReminder(facts, plan) ?? nextCollect(facts, plan);
    if (r) candidates.push(r);
  }
  if (candidates.length === 0) return null;
  const order = (s: PlannedStep) => (s.kind === 'limitation_warning' ? 0 : 1);
  return candidates.sort((a, b) => (a.step.date < b.step.date ? -1 : a.step.date > b.step.date ? 1 : order(a.step) - order(b.step)))[0]!;
}

/** The next reminder-type step of the plan (what `meta.nextReminder` shows), ignoring limitation warnings. */
export function nextReminderStep(facts: DunningFacts, source: PlanSource): { type: 'payment_reminder' | 'reminder'; reminderNumber: number | null; date: string } | null {
  if (!facts.remindable || facts.principalOutstandingOere <= 0 || facts.activePlan) return null;
  const plan = toPlan(source);
  const resumed = (date: string) => (facts.resumesOn !== undefined && date < facts.resumesOn ? facts.resumesOn : date);
  const pr = nextPaymentReminder(facts, plan);
  if (pr) return { type: 'payment_reminder', reminderNumber: null, date: resumed(pr.step.date) };
  const r = nextReminder(facts, plan);
  return r ? { type: 'reminder', reminderNumber: r.reminderNumber, date: resumed(r.date) } : null;
}

export interface FeeFacts {
  /** The plan's fee for this reminder (the organisation's, or the flow step's; the statutory cap for `'statutory'`). */
  effectiveFeeOere: number;
  dueDate: string;
  /** Reminders taken on this invoice before this one. */
  taken: readonly TakenReminder[];
  /** Fee-bearing reminders sent to the customer (any invoice) since their current continuous arrears began. */
  arrearsFeeReminders: number;
}

export type FeeDecision = { feeOere: number; reason: 'charged' | 'no_fee_configured' | 'invoice_cap' | 'arrears_cap' | 'too_soon' | 'time_barred' };

/** The fee of a numbered reminder taken on `on` (Renteloven § 9 b; docs/reminders.md, "The law"). The payment reminder is always free. */
export function decideFee(facts: FeeFacts, on: string): FeeDecision {
  if (isTimeBarred(facts.dueDate, on)) return { feeOere: 0, reason: 'time_barred' };
  if (facts.effectiveFeeOere <= 0) return { feeOere: 0, reason: 'no_fee_configured' };
  const feeBearing = facts.taken.filter((t) => t.feeOere > 0);
  if (feeBearing.length >= FEE_REMINDERS_PER_INVOICE) return { feeOere: 0, reason: 'invoice_cap' };
  if (facts.arrearsFeeReminders >= FEE_REMINDERS_PER_ARREARS) return { feeOere: 0, reason: 'arrears_cap' };
  const previous = feeBearing.at(-1);
  if (previous && on < nextFeeAllowedOn(previous.sentOn)) return { feeOere: 0, reason: 'too_soon' };
  return { feeOere: facts.effectiveFeeOere, reason: 'charged' };
}

const FEE_RULES: Record<FeeDecision['reason'], Rule> = {
  charged: LAW.feeCap,
  no_fee_configured: PLAN_RULES.noFee,
  invoice_cap: LAW.feesPerClaim,
  arrears_cap: LAW.feesPerArrears,
  too_soon: LAW.feeInterval,
  time_barred: LAW.timeBarred,
};

/** The rule behind a fee decision: a fee charged is the plan's, within the § 9 b cap; a fee not charged, why not. */
export const feeRule = (decision: FeeDecision): Rule => FEE_RULES[decision.reason];

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

/**
 * Renteloven § 9 a, stk. 3: whether a reminder step charges the fixed 310 kr compensation (docs/reminders.md,
 * "Compensation"). Only when the organisation charges it, only from a business (a company customer, never a person),
 * only on the first reminder step of the customer's current continuous arrears (automatic or manual, with a fee or
 * without; a new arrears may charge it again), and never on a time-barred claim. No VAT.
 */
export function compensationDue(f: {
  enabled: boolean;
  customerType: 'company' | 'person';
  /** Reminder steps already taken for the customer in the continuous arrears containing this step's date. */
  earlierStepsInArrears: number;
  dueDate: string;
  on: string;
}): number {
  if (!f.enabled || f.customerType !== 'company' || f.earlierStepsInArrears > 0 || isTimeBarred(f.dueDate, f.on)) return 0;
  return COMPENSATION_OERE;
}
