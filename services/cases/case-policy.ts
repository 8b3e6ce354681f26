import { citeRules, handOverDay, LAW, paakravDeadline, type Rule, type StepRule } from '../law/danish-law.ts';
import { REMINDER_LIFECYCLE } from '../reminders/reminder-lifecycle.ts';
import { CASE_LIFECYCLE, INITIAL_CASE_STATE, isCaseClosed, type CaseState } from './case-lifecycle.ts';

/**
 * The collection case's decisions, as pure functions of the case's facts and the business today (docs/collections.md),
 * like the dunning engine's reminder-policy.ts. take-due-case-step.ts reads the facts in the case's transaction and
 * applies the decision; the Case workflow (workflows/case.ts) renders, delivers and hands over.
 *
 * - `OPRETTET`: when the invoice's last reminder was the demand letter and went out, that was the påkrav: it is
 *   recorded, dated its sent day. Otherwise the case sends its own påkrav today.
 * - `PAAKRAV_SENDT`: wait for the hand-over day (the påkrav date + 11: the deadline, påkrav date + 10, has fully run,
 *   Inkassoloven § 10), then hand over, never earlier.
 * - `OVERDRAGET`, `AFSLUTTET`, `TILBAGEKALDT`: nothing more is timed.
 *
 * Dates are 'YYYY-MM-DD' business dates (Europe/Copenhagen).
 */

/** The invoice's last numbered reminder, as the case reads it (a case from an invoice only). */
export interface LastReminder {
  demandLetter: boolean;
  status: 'sent' | 'failed';
  sentOn: string;
}

export interface CaseFacts {
  state: CaseState;
  /** The påkrav date, once PAAKRAV_SENDT. */
  paakravSentOn: string | null;
  /** The invoice's last numbered reminder; null for a case from POST /v1/cases or an invoice never reminded. */
  lastReminder: LastReminder | null;
}

export type CaseDecision =
  /** Nothing more is timed: the case is handed over or closed. */
  | { kind: 'done' }
  /** The påkrav deadline runs: wake on the hand-over day. */
  | { kind: 'wait'; date: string }
  /** The invoice's demand letter was the påkrav: record it, dated `sentOn`. */
  | { kind: 'record_paakrav'; sentOn: string }
  /** The case sends its own påkrav, dated `sentOn` (today). */
  | { kind: 'send_paakrav'; sentOn: string }
  /** The hand-over day has come. */
  | { kind: 'hand_over'; handedOverOn: string };

/** Whether the invoice's last reminder was its påkrav: the demand letter, and it went out. */
export const isPaakrav = (reminder: LastReminder | null): reminder is LastReminder => reminder !== null && reminder.demandLetter && reminder.status === REMINDER_LIFECYCLE.state.sent;

/** The case's next step on `today`. */
export function nextCaseStep(facts: CaseFacts, today: string): CaseDecision {
  if (isCaseClosed(facts.state) || facts.state === CASE_LIFECYCLE.state.OVERDRAGET) return { kind: 'done' };
  if (facts.state === INITIAL_CASE_STATE) {
    return isPaakrav(facts.lastReminder) ? { kind: 'record_paakrav', sentOn: facts.lastReminder.sentOn } : { kind: 'send_paakrav', sentOn: today };
  }
  if (facts.paakravSentOn === null) throw new Error('a case in PAAKRAV_SENDT has a påkrav date');
  const handOverOn = handOverDay(facts.paakravSentOn);
  return today < handOverOn ? { kind: 'wait', date: handOverOn } : { kind: 'hand_over', handedOverOn: today };
}

/** What recording a påkrav sent on `sentOn` sets: its deadline (`paakrav_frist`), and the day the case wakes to hand over. */
export const paakravDates = (sentOn: string): { deadline: string; handOverOn: string } => ({
  deadline: paakravDeadline(sentOn),
  handOverOn: handOverDay(sentOn),
});

/** The case's own rules for dating its påkrav, beside the law's. */
export const CASE_RULES = {
  demandLetterWasPaakrav: {
    id: 'case-paakrav-is-demand-letter',
    text: `The invoice's demand letter went out and was the påkrav: the case records it, dated the day it was sent. ${LAW.paakravDeadline.text}`,
  },
  ownPaakrav: {
    id: 'case-paakrav-today',
    text: `No påkrav went out for the invoice: the case sends its own, dated today. ${LAW.paakravDeadline.text}`,
  },
} as const satisfies Record<string, Rule>;

/**
 * The rule behind a case decision's date, for the step's journaled result (a case step charges no fee); null for
 * `done`, which decides nothing.
 */
export function caseStepRule(decision: CaseDecision): StepRule | null {
  switch (decision.kind) {
    case 'done':
      return null;
    case 'record_paakrav':
      return citeRules(CASE_RULES.demandLetterWasPaakrav, null);
    case 'send_paakrav':
      return citeRules(CASE_RULES.ownPaakrav, null);
    case 'wait':
    case 'hand_over':
      return citeRules(LAW.handOver, null);
  }
}
