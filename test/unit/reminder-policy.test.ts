import assert from 'node:assert/strict';
import {
  arrearsStart,
  decideFee,
  nextReminderStep,
  nextStep,
  type DunningFacts,
  type FeeFacts,
  type ReminderPlanSettings,
  type TakenReminder,
} from '../../services/reminders/reminder-policy.ts';
import { timeBarredOn } from '../../services/law/danish-law.ts';

/** The dunning engine's decisions from tables, against the law and the engine's decisions of docs/reminders.md. */

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

describe('reminder policy: the plan', () => {
  const cases: [string, ReminderPlanSettings, TakenReminder[], ReturnType<typeof nextStep>][] = [
    ['default cadence: reminder 1 on due + 7', DEFAULTS, [], { kind: 'reminder', reminderNumber: 1, date: '2026-01-17', demandLetter: false }],
    ['reminder 2 ten days after the first fee (due + 17, not due + 14)', DEFAULTS, [r(1, '2026-01-17')], { kind: 'reminder', reminderNumber: 2, date: '2026-01-27', demandLetter: false }],
    ['reminder 3, the demand letter, on due + 27', DEFAULTS, [r(1, '2026-01-17'), r(2, '2026-01-27')], { kind: 'reminder', reminderNumber: 3, date: '2026-02-06', demandLetter: true }],
    ['a cadence faster than 10 days still lands 10 days apart', { ...DEFAULTS, cadence: cadence(1, 2, 3) }, [r(1, '2026-01-11')], { kind: 'reminder', reminderNumber: 2, date: '2026-01-21', demandLetter: false }],
    ['a slower cadence keeps its own days', { ...DEFAULTS, cadence: cadence(10, 30, 60) }, [r(1, '2026-01-20')], { kind: 'reminder', reminderNumber: 2, date: '2026-02-09', demandLetter: false }],
    ['the floor counts from the previous fee-bearing reminder only', { ...DEFAULTS, cadence: cadence(1, 2, 3) }, [r(1, '2026-01-11', 0)], { kind: 'reminder', reminderNumber: 2, date: '2026-01-12', demandLetter: false }],
    ['a manual reminder moves the plan on to the next number', DEFAULTS, [{ ...r(1, '2026-01-12'), reminderNumber: 1 }], { kind: 'reminder', reminderNumber: 2, date: '2026-01-24', demandLetter: false }],
    ['maxReminders 1: the first reminder is the demand letter', { ...DEFAULTS, maxReminders: 1 }, [], { kind: 'reminder', reminderNumber: 1, date: '2026-01-17', demandLetter: true }],
    ['the payment reminder comes first, on due + paymentReminderDays', { ...DEFAULTS, paymentReminderEnabled: true }, [], { kind: 'payment_reminder', date: '2026-01-13' }],
    ['after the payment reminder, reminder 1 on its own day (the payment reminder carries no fee)', { ...DEFAULTS, paymentReminderEnabled: true }, [{ type: 'payment_reminder', reminderNumber: null, feeOere: 0, sentOn: '2026-01-13' }], { kind: 'reminder', reminderNumber: 1, date: '2026-01-17', demandLetter: false }],
  ];
  for (const [name, settings, taken, expected] of cases) {
    it(name, () => assert.deepEqual(nextStep(facts(taken), settings), expected));
  }

  it('after the last reminder of the plan only the limitation warnings are left, 90 and 30 days before limitation', () => {
    const done = [r(1, '2026-01-17'), r(2, '2026-01-27'), r(3, '2026-02-06')];
    assert.deepEqual(nextStep(facts(done), DEFAULTS), { kind: 'limitation_warning', daysBefore: 90, date: '2028-10-12' });
    assert.deepEqual(nextStep(facts(done, { warned: [90] }), DEFAULTS), { kind: 'limitation_warning', daysBefore: 30, date: '2028-12-11' });
    assert.equal(nextStep(facts(done, { warned: [90, 30] }), DEFAULTS), null);
    assert.equal(nextReminderStep(facts(done), DEFAULTS), null);
  });

  it('maxReminders 0 plans no reminder at all', () => {
    assert.deepEqual(nextStep(facts(), { ...DEFAULTS, maxReminders: 0 }), { kind: 'limitation_warning', daysBefore: 90, date: '2028-10-12' });
  });

  it('never more than 3 numbered reminders, whatever the plan', () => {
    assert.equal(nextReminderStep(facts([r(1, '2026-01-17'), r(2, '2026-01-27'), r(3, '2026-02-06')]), DEFAULTS), null);
  });

  it('ends when the invoice is paid, in collections, or only fees are outstanding; a partial payment changes nothing', () => {
    assert.equal(nextStep(facts([], { remindable: false }), DEFAULTS), null);
    assert.equal(nextStep(facts([r(1, '2026-01-17')], { principalOutstandingOere: 0 }), DEFAULTS), null);
    assert.deepEqual(nextStep(facts([], { principalOutstandingOere: 1 }), DEFAULTS), nextStep(facts(), DEFAULTS));
  });

  it('a limitation warning on the same day as a reminder comes first', () => {
    // Due 2023-04-12: time-barred on 2026-04-12, the 90-day warning on 2026-01-12; reminder 1 (cadence 1000 days…) is
    // capped at 365 by the settings, so put reminder 1 on the warning's day with a cadence of its own.
    const due = '2023-04-12';
    const plan = { ...DEFAULTS, cadence: cadence(1006, 1007, 1008) };
    assert.deepEqual(nextStep(facts([], { dueDate: due }), plan), { kind: 'limitation_warning', daysBefore: 90, date: '2026-01-12' });
  });

  it('meta.nextReminder names the reminder, not the warning', () => {
    assert.deepEqual(nextReminderStep(facts(), DEFAULTS), { type: 'reminder', reminderNumber: 1, date: '2026-01-17' });
    assert.deepEqual(nextReminderStep(facts(), { ...DEFAULTS, paymentReminderEnabled: true }), { type: 'payment_reminder', reminderNumber: null, date: '2026-01-13' });
  });

  it('autoCollections: after the demand letter, collect on its deadline + 1 day (sent + 11); not before the plan is done', () => {
    const auto = { ...DEFAULTS, autoCollections: true };
    const done = [r(1, '2026-01-17'), r(2, '2026-01-27'), r(3, '2026-02-06')];
    const cases: [string, ReminderPlanSettings, TakenReminder[], Partial<DunningFacts>, ReturnType<typeof nextStep>][] = [
      ['the plan done: collect on the demand letter + 11', auto, done, {}, { kind: 'collect', date: '2026-02-17' }],
      ['a plan still running: the next reminder', auto, done.slice(0, 2), {}, { kind: 'reminder', reminderNumber: 3, date: '2026-02-06', demandLetter: true }],
      ['maxReminders 1: collect 11 days after reminder 1', { ...auto, maxReminders: 1 }, done.slice(0, 1), {}, { kind: 'collect', date: '2026-01-28' }],
      ['a free demand letter counts the same', auto, [r(1, '2026-01-17'), r(2, '2026-01-27'), r(3, '2026-02-06', 0)], {}, { kind: 'collect', date: '2026-02-17' }],
      ['autoCollections off: the limitation warning', DEFAULTS, done, {}, { kind: 'limitation_warning', daysBefore: 90, date: '2028-10-12' }],
      ['maxReminders 0: no demand letter, no collect', { ...auto, maxReminders: 0 }, [], {}, { kind: 'limitation_warning', daysBefore: 90, date: '2028-10-12' }],
      ['only fees outstanding: nothing', auto, done, { principalOutstandingOere: 0 }, null],
      ['in collections already: nothing', auto, done, { remindable: false }, null],
      // Due 2023-02-10, barred 2026-02-10: a collect dated on or after it is never planned; the warnings were written.
      ['time-barred by the collect date: nothing', auto, done, { dueDate: '2023-02-10', warned: [90, 30] }, null],
    ];
    for (const [name, plan, taken, over, expected] of cases) assert.deepEqual(nextStep(facts(taken, over), plan), expected, name);
    // meta.nextReminder names reminders only.
    assert.equal(nextReminderStep(facts(done), auto), null);
  });

  it('a plan that began after the due date takes nothing before it began, and spaces what it gathers 10 days apart', () => {
    const late = { startedOn: '2026-03-01' };
    assert.deepEqual(nextStep(facts([], late), DEFAULTS), { kind: 'reminder', reminderNumber: 1, date: '2026-03-01', demandLetter: false });
    assert.deepEqual(nextStep(facts([r(1, '2026-03-01', 0)], late), DEFAULTS), { kind: 'reminder', reminderNumber: 2, date: '2026-03-11', demandLetter: false });
    assert.deepEqual(nextReminderStep(facts([], late), { ...DEFAULTS, paymentReminderEnabled: true }), { type: 'payment_reminder', reminderNumber: null, date: '2026-03-01' });
    // Issued within 90 days of limitation: only the 30-day warning is still ahead.
    const warnings = nextStep(facts([r(1, '2028-11-20'), r(2, '2028-11-30'), r(3, '2028-12-10')], { startedOn: '2028-11-20' }), DEFAULTS);
    assert.deepEqual(warnings, { kind: 'limitation_warning', daysBefore: 30, date: '2028-12-11' });
  });
});

describe('reminder policy: the fee (Renteloven § 9 b)', () => {
  const fee = (over: Partial<FeeFacts>, on: string) => decideFee({ effectiveFeeOere: 10_000, dueDate: DUE, taken: [], arrearsFeeReminders: 0, ...over }, on);
  const cases: [string, Partial<FeeFacts>, string, ReturnType<typeof decideFee>][] = [
    ['the first reminder carries the fee', {}, '2026-01-17', { feeOere: 10_000, reason: 'charged' }],
    ['the configured fee, below the cap', { effectiveFeeOere: 6_500 }, '2026-01-17', { feeOere: 6_500, reason: 'charged' }],
    ['a fee of 0 configured', { effectiveFeeOere: 0 }, '2026-01-17', { feeOere: 0, reason: 'no_fee_configured' }],
    ['exactly 10 days after the previous fee', { taken: [r(1, '2026-01-17')] }, '2026-01-27', { feeOere: 10_000, reason: 'charged' }],
    ['9 days after the previous fee: free', { taken: [r(1, '2026-01-17')] }, '2026-01-26', { feeOere: 0, reason: 'too_soon' }],
    ['the fourth fee on one invoice is refused', { taken: [r(1, '2026-01-17'), r(2, '2026-01-27'), r(3, '2026-02-06')] }, '2026-03-01', { feeOere: 0, reason: 'invoice_cap' }],
    ['3 fees already in the customer\'s continuous arrears', { arrearsFeeReminders: 3 }, '2026-01-17', { feeOere: 0, reason: 'arrears_cap' }],
    ['2 fees in the arrears: the third is allowed', { arrearsFeeReminders: 2 }, '2026-01-17', { feeOere: 10_000, reason: 'charged' }],
    ['a time-barred claim carries no fee', {}, '2029-01-10', { feeOere: 0, reason: 'time_barred' }],
    ['the day before limitation still does', {}, '2029-01-09', { feeOere: 10_000, reason: 'charged' }],
  ];
  for (const [name, over, on, expected] of cases) it(name, () => assert.deepEqual(fee(over, on), expected));

  it('limitation is 3 years from the due date; a 29 February due date is barred on 28 February', () => {
    assert.equal(timeBarredOn('2026-01-10'), '2029-01-10');
    assert.equal(timeBarredOn('2024-02-29'), '2027-02-28');
    assert.equal(timeBarredOn('2025-12-31'), '2028-12-31');
  });
});

describe('reminder policy: continuous arrears', () => {
  const cases: [string, { from: string; until: string | null }[], string, string | null][] = [
    ['one open invoice: from the day after its due date', [{ from: '2026-01-11', until: null }], '2026-02-01', '2026-01-11'],
    ['two overlapping invoices make one arrears', [{ from: '2026-01-11', until: '2026-02-10' }, { from: '2026-02-01', until: null }], '2026-03-01', '2026-01-11'],
    ['an invoice settled the day another falls overdue: still continuous', [{ from: '2026-01-11', until: '2026-02-01' }, { from: '2026-02-01', until: null }], '2026-03-01', '2026-01-11'],
    ['a day with nothing overdue ends the arrears', [{ from: '2026-01-11', until: '2026-02-01' }, { from: '2026-02-02', until: null }], '2026-03-01', '2026-02-02'],
    ['not in arrears when everything was settled', [{ from: '2026-01-11', until: '2026-02-01' }], '2026-03-01', null],
    ['a later invoice not yet overdue does not count', [{ from: '2026-01-11', until: null }, { from: '2026-04-01', until: null }], '2026-03-01', '2026-01-11'],
    ['an invoice settled before it fell overdue is no interval', [{ from: '2026-01-11', until: '2026-01-11' }, { from: '2026-01-20', until: null }], '2026-03-01', '2026-01-20'],
  ];
  for (const [name, intervals, on, expected] of cases) it(name, () => assert.equal(arrearsStart(intervals, on), expected));
});
