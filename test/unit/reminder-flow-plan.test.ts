import assert from 'node:assert/strict';
import {
  decideFee,
  nextReminderStep,
  nextStep,
  planFromGraph,
  planFromSettings,
  planReminderCount,
  stepRule,
  type CustomerType,
  type DunningFacts,
  type GraphStep,
  type PlanChannel,
  type ReminderPlan,
  type TakenReminder,
} from '../../services/reminders/reminder-policy.ts';
import { chooseChannel } from '../../services/reminders/choose-reminder-channel.ts';

/**
 * The plan an invoice pinned to a reminder flow version follows: the version's graph as a plan for the customer's
 * type (steps filtered by `when.customerType`), its fees and channels, and the law binding it whatever it says.
 */

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
const reminder = (daysAfterDue: number, over: Partial<GraphStep> = {}): GraphStep => ({ action: 'reminder', daysAfterDue, fee: 'statutory', channel: 'email_or_letter', ...over });

/** The B2B example of docs/reminder-flows.md, with a free payment reminder for everyone in front. */
const MIXED = {
  steps: [
    { action: 'payment_reminder', daysAfterDue: 3, channel: 'email' },
    reminder(7, { fee: 5000, channel: 'email' }),
    reminder(14, { fee: 5000, channel: 'email', when: { customerType: 'company' } }),
    reminder(21, { channel: 'letter' }),
    { action: 'collections', daysAfterDue: 32, channel: 'email_or_letter', when: { customerType: 'company' } },
  ] as GraphStep[],
};

describe('reminder flow plan: the graph as a plan', () => {
  const cases: [string, CustomerType, ReminderPlan['steps']][] = [
    [
      'a company gets every step',
      'company',
      [
        { action: 'payment_reminder', daysAfterDue: 3, fee: 0, channel: 'email' },
        { action: 'reminder', daysAfterDue: 7, fee: 5000, channel: 'email' },
        { action: 'reminder', daysAfterDue: 14, fee: 5000, channel: 'email' },
        { action: 'reminder', daysAfterDue: 21, fee: 'statutory', channel: 'letter' },
        { action: 'collections', daysAfterDue: 32, fee: 0, channel: 'email_or_letter' },
      ],
    ],
    [
      'a person skips the company-only steps',
      'person',
      [
        { action: 'payment_reminder', daysAfterDue: 3, fee: 0, channel: 'email' },
        { action: 'reminder', daysAfterDue: 7, fee: 5000, channel: 'email' },
        { action: 'reminder', daysAfterDue: 21, fee: 'statutory', channel: 'letter' },
      ],
    ],
  ];
  for (const [name, type, steps] of cases) it(name, () => assert.deepEqual(planFromGraph(MIXED, type).steps, steps));

  it('defaults: a reminder without fee or channel is statutory by e-mail or letter', () => {
    const plan = planFromGraph({ steps: [{ action: 'reminder', daysAfterDue: 5 }] }, 'person');
    assert.deepEqual(plan.steps, [{ action: 'reminder', daysAfterDue: 5, fee: 'statutory', channel: 'email_or_letter' }]);
  });

  it('maxReminders is the number of reminder steps for the customer type; the last is the demand letter', () => {
    assert.equal(planReminderCount(planFromGraph(MIXED, 'company')), 3);
    assert.equal(planReminderCount(planFromGraph(MIXED, 'person')), 2);
    const person = planFromGraph(MIXED, 'person');
    assert.deepEqual(nextStep(facts([{ type: 'payment_reminder', reminderNumber: null, feeOere: 0, sentOn: '2026-01-13' }, r(1, '2026-01-17', 5000)]), person), {
      kind: 'reminder',
      reminderNumber: 2,
      date: '2026-01-31',
      demandLetter: true,
    });
  });

  it('the fee and channel of each step; the payment reminder is free; a manual reminder beyond the steps is as the last', () => {
    const company = planFromGraph(MIXED, 'company');
    const rows: [string, Parameters<typeof stepRule>[1], ReturnType<typeof stepRule>][] = [
      ['payment reminder', { type: 'payment_reminder', reminderNumber: null }, { feeOere: 0, channel: 'email' }],
      ['reminder 1: 5000 øre by e-mail', { type: 'reminder', reminderNumber: 1 }, { feeOere: 5000, channel: 'email' }],
      ['reminder 3: statutory (the cap) by letter', { type: 'reminder', reminderNumber: 3 }, { feeOere: 10_000, channel: 'letter' }],
    ];
    for (const [name, step, expected] of rows) assert.deepEqual(stepRule(company, step), expected, name);
    const person = planFromGraph(MIXED, 'person');
    assert.deepEqual(stepRule(person, { type: 'reminder', reminderNumber: 3 }), { feeOere: 10_000, channel: 'letter' });
    const none = planFromGraph({ steps: [{ action: 'collections', daysAfterDue: 30 }] }, 'person');
    assert.deepEqual(stepRule(none, { type: 'reminder', reminderNumber: 1 }), { feeOere: 10_000, channel: 'email_or_letter' });
  });

  it('the settings as a plan: their fee and letter fallback on every reminder, the collect step after the demand letter', () => {
    const settings = {
      maxReminders: 2,
      cadence: [
        { reminderNumber: 1, daysAfterDue: 7 },
        { reminderNumber: 2, daysAfterDue: 14 },
        { reminderNumber: 3, daysAfterDue: 21 },
      ],
      paymentReminderEnabled: true,
      paymentReminderDays: 3,
      autoCollections: true,
      feeOere: 6500,
      letterFallback: false,
    };
    assert.deepEqual(planFromSettings(settings), {
      steps: [
        { action: 'payment_reminder', daysAfterDue: 3, fee: 0, channel: 'email' },
        { action: 'reminder', daysAfterDue: 7, fee: 6500, channel: 'email' },
        { action: 'reminder', daysAfterDue: 14, fee: 6500, channel: 'email' },
        { action: 'collections', daysAfterDue: 0, fee: 0, channel: 'email' },
      ],
      beyond: { fee: 6500, channel: 'email' },
    });
    assert.deepEqual(planFromSettings({ ...settings, feeOere: null, letterFallback: true, autoCollections: false }).beyond, { fee: 'statutory', channel: 'email_or_letter' });
  });
});

describe('reminder flow plan: the law binds the graph', () => {
  // Reminders 5 days apart: the 10-day floor between fee-bearing reminders moves them.
  const FIVE = planFromGraph({ steps: [reminder(7), reminder(12), reminder(17)] }, 'company');
  const rows: [string, ReminderPlan, TakenReminder[], ReturnType<typeof nextStep>][] = [
    ['reminder 1 on its own day', FIVE, [], { kind: 'reminder', reminderNumber: 1, date: '2026-01-17', demandLetter: false }],
    ['a 5-day gap: reminder 2 ten days after the first fee (due + 17, not due + 12)', FIVE, [r(1, '2026-01-17')], { kind: 'reminder', reminderNumber: 2, date: '2026-01-27', demandLetter: false }],
    ['the demand letter ten days after that', FIVE, [r(1, '2026-01-17'), r(2, '2026-01-27')], { kind: 'reminder', reminderNumber: 3, date: '2026-02-06', demandLetter: true }],
    ['after a free reminder, no floor', FIVE, [r(1, '2026-01-17', 0)], { kind: 'reminder', reminderNumber: 2, date: '2026-01-22', demandLetter: false }],
  ];
  for (const [name, plan, taken, expected] of rows) it(name, () => assert.deepEqual(nextStep(facts(taken), plan), expected));

  it('the fee decision refuses a fee sooner than 10 days after the last, whatever the graph planned', () => {
    const rule = stepRule(FIVE, { type: 'reminder', reminderNumber: 2 });
    const feeFacts = { effectiveFeeOere: rule.feeOere, dueDate: DUE, taken: [r(1, '2026-01-17')], arrearsFeeReminders: 0 };
    assert.deepEqual(decideFee(feeFacts, '2026-01-22'), { feeOere: 0, reason: 'too_soon' });
    assert.deepEqual(decideFee(feeFacts, '2026-01-27'), { feeOere: 10_000, reason: 'charged' });
    assert.deepEqual(decideFee({ ...feeFacts, taken: [], arrearsFeeReminders: 3 }, '2026-01-17'), { feeOere: 0, reason: 'arrears_cap' });
    assert.deepEqual(decideFee({ ...feeFacts, taken: [] }, '2029-01-10'), { feeOere: 0, reason: 'time_barred' });
    // A step's own fee of 0.
    assert.deepEqual(decideFee({ ...feeFacts, effectiveFeeOere: stepRule(planFromGraph({ steps: [reminder(7, { fee: 0 })] }, 'person'), { type: 'reminder', reminderNumber: 1 }).feeOere, taken: [] }, '2026-01-17'), {
      feeOere: 0,
      reason: 'no_fee_configured',
    });
  });

  it('the collections step: on due + its days when the reminders are done, never before the demand letter deadline + 1', () => {
    const flow = planFromGraph({ steps: [reminder(7), reminder(17), { action: 'collections', daysAfterDue: 28 }] }, 'company');
    const done = [r(1, '2026-01-17'), r(2, '2026-01-27')];
    assert.deepEqual(nextStep(facts(done), flow), { kind: 'collect', date: '2026-02-07' });
    // The demand letter went out late (a clock catch-up, the floor): its deadline first.
    assert.deepEqual(nextStep(facts([r(1, '2026-01-17'), r(2, '2026-02-01')]), flow), { kind: 'collect', date: '2026-02-12' });
    // Not before the reminders are done; not when only fees are left; not in meta.nextReminder.
    assert.deepEqual(nextStep(facts(done.slice(0, 1)), flow), { kind: 'reminder', reminderNumber: 2, date: '2026-01-27', demandLetter: true });
    assert.equal(nextStep(facts(done, { principalOutstandingOere: 0 }), flow), null);
    assert.equal(nextReminderStep(facts(done), flow), null);
    // A flow of a collections step alone (for this customer type) collects on its day.
    const only = planFromGraph({ steps: [reminder(7, { when: { customerType: 'company' } }), { action: 'collections', daysAfterDue: 30 }] }, 'person');
    assert.deepEqual(nextStep(facts(), only), { kind: 'collect', date: '2026-02-09' });
  });

  it('a company-only flow plans nothing but the limitation warnings for a person', () => {
    const b2b = planFromGraph({ steps: [reminder(7, { when: { customerType: 'company' } })] }, 'person');
    assert.equal(planReminderCount(b2b), 0);
    assert.deepEqual(nextStep(facts(), b2b), { kind: 'limitation_warning', daysBefore: 90, date: '2028-10-12' });
  });
});

describe('reminder flow plan: the channel rule', () => {
  const rows: [PlanChannel, boolean, boolean, ReturnType<typeof chooseChannel>][] = [
    ['email', true, true, { channel: 'email' }],
    ['email', false, true, { channel: null, failureCode: 'customer_email_missing' }],
    ['letter', true, true, { channel: 'letter' }],
    ['letter', true, false, { channel: null, failureCode: 'customer_address_missing' }],
    ['email_or_letter', true, false, { channel: 'email' }],
    ['email_or_letter', false, true, { channel: 'letter' }],
    ['email_or_letter', false, false, { channel: null, failureCode: 'customer_address_missing' }],
  ];
  for (const [rule, hasEmail, hasAddress, expected] of rows) {
    it(`${rule}, e-mail ${hasEmail ? 'yes' : 'no'}, address ${hasAddress ? 'yes' : 'no'}`, () =>
      assert.deepEqual(chooseChannel({ customer: { type: 'person', hasEmail, hasAddress } }, rule), expected));
  }
});
