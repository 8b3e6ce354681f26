import assert from 'node:assert/strict';
import { CASE_RULES, caseStepRule, nextCaseStep, type CaseFacts } from '../../services/cases/case-policy.ts';
import { citeRules, LAW, STATUTORY_FEE_OERE, type Rule } from '../../services/law/danish-law.ts';
import {
  decideFee,
  decideStep,
  feeRule,
  nextStep,
  PLAN_RULES,
  type DunningFacts,
  type FeeDecision,
  type FeeFacts,
  type PlanSource,
  type ReminderPlanSettings,
  type TakenReminder,
} from '../../services/reminders/reminder-policy.ts';

/**
 * Each decision of the dunning and collection engines carries the rule that decided its date and its fee, from
 * tables: the rule the journal of a taken step names (docs/operator-guide.md, "Reading a journal").
 */

const DEFAULTS: ReminderPlanSettings = {
  maxReminders: 3,
  cadence: [
    { reminderNumber: 1, daysAfterDue: 7 },
    { reminderNumber: 2, daysAfterDue: 14 },
    { reminderNumber: 3, daysAfterDue: 21 },
  ],
  paymentReminderEnabled: false,
  paymentReminderDays: 3,
};
const DUE = '2026-01-10';
const facts = (taken: TakenReminder[] = [], over: Partial<DunningFacts> = {}): DunningFacts => ({
  dueDate: DUE,
  remindable: true,
  principalOutstandingOere: 125_000,
  taken,
  warned: [],
  ...over,
});
const r = (n: number, sentOn: string, feeOere = 10_000): TakenReminder => ({ type: 'reminder', reminderNumber: n, feeOere, sentOn });
const cadence = (...days: number[]) => days.map((daysAfterDue, i) => ({ reminderNumber: i + 1, daysAfterDue }));
const done = [r(1, '2026-01-17'), r(2, '2026-01-27'), r(3, '2026-02-06')];

describe('step rules: what decided a dunning step’s date', () => {
  const rows: [string, PlanSource, DunningFacts, string, Rule][] = [
    ['reminder 1 on the plan’s day (due + 7)', DEFAULTS, facts(), '2026-01-17', PLAN_RULES.planDate],
    ['reminder 2 pushed from due + 14 to ten days after the first fee', DEFAULTS, facts([r(1, '2026-01-17')]), '2026-01-27', LAW.feeInterval],
    ['a slower cadence keeps its own day', { ...DEFAULTS, cadence: cadence(10, 30, 60) }, facts([r(1, '2026-01-20')]), '2026-02-09', PLAN_RULES.planDate],
    ['the free payment reminder on due + 3', { ...DEFAULTS, paymentReminderEnabled: true }, facts(), '2026-01-13', PLAN_RULES.planDate],
    ['an invoice issued after reminder 1’s day: the issue day', DEFAULTS, facts([], { startedOn: '2026-01-25' }), '2026-01-25', PLAN_RULES.startedLate],
    ['a payment reminder whose day passed before issue: the issue day', { ...DEFAULTS, paymentReminderEnabled: true }, facts([], { startedOn: '2026-01-20' }), '2026-01-20', PLAN_RULES.startedLate],
    ['the collect step: the day after the demand letter’s deadline', { ...DEFAULTS, autoCollections: true }, facts(done), '2026-02-17', LAW.handOver],
    ['a flow’s collections step later than the deadline keeps its own day', { steps: [{ action: 'reminder', daysAfterDue: 7, fee: 'statutory', channel: 'email' }, { action: 'collections', daysAfterDue: 60, fee: 0, channel: 'email' }], beyond: { fee: 'statutory', channel: 'email' } }, facts([r(1, '2026-01-17')]), '2026-03-11', PLAN_RULES.planDate],
    ['after the plan, the limitation warning 90 days before the claim is time-barred', DEFAULTS, facts(done), '2028-10-12', LAW.limitation],
  ];
  for (const [name, plan, f, date, rule] of rows) {
    it(name, () => {
      const decided = decideStep(f, plan);
      assert.ok(decided, 'a step');
      assert.equal(decided.step.date, date);
      assert.equal(decided.dateRule.id, rule.id);
      // The rule rides along; the decision itself is nextStep's, unchanged.
      assert.deepEqual(decided.step, nextStep(f, plan));
    });
  }

  it('nothing left: no step and no rule', () => {
    assert.equal(decideStep(facts([], { remindable: false }), DEFAULTS), null);
  });
});

describe('step rules: what decided a reminder’s fee', () => {
  const fee = (over: Partial<FeeFacts> = {}): FeeFacts => ({ effectiveFeeOere: STATUTORY_FEE_OERE, dueDate: DUE, taken: [], arrearsFeeReminders: 0, ...over });
  const rows: [string, FeeFacts, string, FeeDecision['reason'], Rule][] = [
    ['the statutory fee, within the 100 kr cap', fee(), '2026-01-17', 'charged', LAW.feeCap],
    ['a plan without a fee', fee({ effectiveFeeOere: 0 }), '2026-01-17', 'no_fee_configured', PLAN_RULES.noFee],
    ['a fourth fee on the same claim', fee({ taken: done }), '2026-03-01', 'invoice_cap', LAW.feesPerClaim],
    ['a fourth fee in the customer’s continuous arrears', fee({ arrearsFeeReminders: 3 }), '2026-01-17', 'arrears_cap', LAW.feesPerArrears],
    ['sooner than 10 days after the previous fee', fee({ taken: [r(1, '2026-01-17')] }), '2026-01-20', 'too_soon', LAW.feeInterval],
    ['a claim time-barred by then', fee(), '2029-01-10', 'time_barred', LAW.timeBarred],
  ];
  for (const [name, f, on, reason, rule] of rows) {
    it(name, () => {
      const decision = decideFee(f, on);
      assert.equal(decision.reason, reason);
      assert.equal(feeRule(decision).id, rule.id);
    });
  }

  it('every reason of decideFee has a rule', () => {
    for (const reason of ['charged', 'no_fee_configured', 'invoice_cap', 'arrears_cap', 'too_soon', 'time_barred'] as const) {
      assert.ok(feeRule({ feeOere: 0, reason }).text.length > 0, reason);
    }
  });
});

describe('step rules: what decided a collection case’s step', () => {
  const f = (over: Partial<CaseFacts> = {}): CaseFacts => ({ state: 'OPRETTET', paakravSentOn: null, lastReminder: null, ...over });
  const rows: [string, CaseFacts, string, Rule | null][] = [
    ['the invoice’s demand letter was the påkrav', f({ lastReminder: { demandLetter: true, status: 'sent', sentOn: '2026-02-20' } }), '2026-03-02', CASE_RULES.demandLetterWasPaakrav],
    ['the case sends its own påkrav today', f(), '2026-03-02', CASE_RULES.ownPaakrav],
    ['waiting for the hand-over day', f({ state: 'PAAKRAV_SENDT', paakravSentOn: '2026-03-02' }), '2026-03-05', LAW.handOver],
    ['the hand-over day', f({ state: 'PAAKRAV_SENDT', paakravSentOn: '2026-03-02' }), '2026-03-13', LAW.handOver],
    ['handed over: nothing decided', f({ state: 'OVERDRAGET', paakravSentOn: '2026-03-02' }), '2026-03-13', null],
  ];
  for (const [name, facts, today, rule] of rows) {
    it(name, () => assert.deepEqual(caseStepRule(nextCaseStep(facts, today)), rule === null ? null : { date: rule.id, fee: null, text: rule.text }));
  }
});

describe('step rules: the words', () => {
  it('cites the statute and its numbers from the law module', () => {
    assert.equal(LAW.feeCap.text, 'Renteloven § 9 b, stk. 1: a reminder may cost at most 100 kr.');
    assert.match(LAW.feeInterval.text, /^Renteloven § 9 b, stk\. 2: at least 10 days/);
    assert.match(LAW.handOver.text, /^Inkassoloven § 10: .*\+ 11 days/);
    assert.match(CASE_RULES.ownPaakrav.text, /Inkassoloven § 10, stk\. 1: the påkrav gives the debtor at least 10 days/);
  });

  it('a step’s rule names its date rule and fee rule, and joins their words', () => {
    assert.deepEqual(citeRules(LAW.feeInterval, LAW.feeCap), { date: 'renteloven-9b-10-days', fee: 'renteloven-9b-100-kr', text: `${LAW.feeInterval.text} ${LAW.feeCap.text}` });
    assert.deepEqual(citeRules(LAW.feeInterval, LAW.feeInterval), { date: 'renteloven-9b-10-days', fee: 'renteloven-9b-10-days', text: LAW.feeInterval.text });
    assert.deepEqual(citeRules(LAW.limitation, null), { date: 'foraeldelsesloven-3-warning', fee: null, text: LAW.limitation.text });
  });

  it('every rule has a distinct id', () => {
    const ids = [...Object.values(LAW), ...Object.values(PLAN_RULES), ...Object.values(CASE_RULES)].map((rule) => rule.id);
    assert.equal(new Set(ids).size, ids.length);
  });
});
