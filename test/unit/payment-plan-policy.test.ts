import assert from 'node:assert/strict';
import { allPaid, breaksOn, fillInstallments, installmentErrors, waivedSpans, type Installment } from '../../services/payment-plans/payment-plan-policy.ts';
import { decideStep, nextReminderStep, planFromSettings, type DunningFacts } from '../../services/reminders/reminder-policy.ts';

/** A payment plan's rules (docs/reminders.md, "Payment plans"), from tables. */
describe('payment plan policy', () => {
  const plan: Installment[] = [
    { number: 1, dueDate: '2026-03-01', amountOere: 40_000 },
    { number: 2, dueDate: '2026-04-01', amountOere: 40_000 },
    { number: 3, dueDate: '2026-05-01', amountOere: 45_000 },
  ];

  it('fills the instalments in order and dates their status', () => {
    const table: { received: number; today: string; paid: number[]; status: string[] }[] = [
      { received: 0, today: '2026-03-01', paid: [0, 0, 0], status: ['open', 'open', 'open'] },
      // late from the day after its due date
      { received: 0, today: '2026-03-02', paid: [0, 0, 0], status: ['late', 'open', 'open'] },
      { received: 39_999, today: '2026-03-02', paid: [39_999, 0, 0], status: ['late', 'open', 'open'] },
      { received: 40_000, today: '2026-03-02', paid: [40_000, 0, 0], status: ['paid', 'open', 'open'] },
      { received: 50_000, today: '2026-04-02', paid: [40_000, 10_000, 0], status: ['paid', 'late', 'open'] },
      { received: 125_000, today: '2026-06-01', paid: [40_000, 40_000, 45_000], status: ['paid', 'paid', 'paid'] },
      // more than the plan: every instalment paid, nothing beyond
      { received: 200_000, today: '2026-06-01', paid: [40_000, 40_000, 45_000], status: ['paid', 'paid', 'paid'] },
    ];
    for (const row of table) {
      const filled = fillInstallments(plan, row.received, row.today);
      assert.deepEqual(filled.map((i) => i.paidOere), row.paid, JSON.stringify(row));
      assert.deepEqual(filled.map((i) => i.status), row.status, JSON.stringify(row));
    }
    assert.equal(allPaid(plan, 124_999), false);
    assert.equal(allPaid(plan, 125_000), true);
  });

  it('breaks 10 days after the first instalment not fully paid', () => {
    const table: [number, string | null][] = [
      [0, '2026-03-11'],
      [39_999, '2026-03-11'],
      [40_000, '2026-04-11'],
      [80_000, '2026-05-11'],
      [124_999, '2026-05-11'],
      [125_000, null],
    ];
    for (const [received, expected] of table) assert.equal(breaksOn(plan, received), expected, String(received));
  });

  it('refuses dates out of order and a first date before today, at the item pointer', () => {
    assert.deepEqual(installmentErrors([{ dueDate: '2026-03-01' }, { dueDate: '2026-03-02' }], '2026-03-01'), []);
    assert.deepEqual(
      installmentErrors([{ dueDate: '2026-02-28' }, { dueDate: '2026-03-05' }, { dueDate: '2026-03-05' }], '2026-03-01').map((e) => e.path),
      ['/installments/0/dueDate', '/installments/2/dueDate'],
    );
  });

  it('waives interest from the day after the plan was made to the day before it ended', () => {
    assert.deepEqual(waivedSpans([{ waiveInterest: true, createdOn: '2026-03-01', endedOn: null }]), [{ from: '2026-03-02', to: null }]);
    assert.deepEqual(waivedSpans([{ waiveInterest: true, createdOn: '2026-03-01', endedOn: '2026-04-11' }]), [{ from: '2026-03-02', to: '2026-04-10' }]);
    assert.deepEqual(waivedSpans([{ waiveInterest: true, createdOn: '2026-03-01', endedOn: '2026-03-01' }]), []);
    assert.deepEqual(waivedSpans([{ waiveInterest: false, createdOn: '2026-03-01', endedOn: null }]), []);
  });

  describe('the dunning decision around a plan', () => {
    const settings = planFromSettings({
      maxReminders: 3,
      cadence: [{ reminderNumber: 1, daysAfterDue: 7 }, { reminderNumber: 2, daysAfterDue: 17 }, { reminderNumber: 3, daysAfterDue: 27 }],
      paymentReminderEnabled: false,
      paymentReminderDays: 3,
    });
    const base: DunningFacts = {
      dueDate: '2026-01-10',
      remindable: true,
      principalOutstandingOere: 125_000,
      taken: [{ type: 'reminder', reminderNumber: 1, feeOere: 10_000, sentOn: '2026-01-17' }],
      warned: [],
      startedOn: '2026-01-01',
    };

    it('takes no reminder while a plan is active: its only step is the break', () => {
      assert.deepEqual(decideStep({ ...base, activePlan: { breaksOn: '2026-03-11' } }, settings)?.step, { kind: 'break_plan', date: '2026-03-11' });
      assert.equal(nextReminderStep({ ...base, activePlan: { breaksOn: '2026-03-11' } }, settings), null);
    });

    it('resumes with the next reminder number on max(due + cadence, previous fee + 10, the end date)', () => {
      const table: { resumesOn: string; date: string }[] = [
        // the plan ended before reminder 2's own day: its own day (due + 17)
        { resumesOn: '2026-01-20', date: '2026-01-27' },
        // ended later: on the end date itself, never before it
        { resumesOn: '2026-03-11', date: '2026-03-11' },
      ];
      for (const row of table) {
        const decided = decideStep({ ...base, resumesOn: row.resumesOn }, settings);
        assert.deepEqual(decided?.step, { kind: 'reminder', reminderNumber: 2, date: row.date, demandLetter: false }, JSON.stringify(row));
        assert.deepEqual(nextReminderStep({ ...base, resumesOn: row.resumesOn }, settings), { type: 'reminder', reminderNumber: 2, date: row.date });
      }
      // the 10-day floor after the previous fee still holds when the plan ended sooner
      const soon = decideStep({ ...base, taken: [{ type: 'reminder', reminderNumber: 1, feeOere: 10_000, sentOn: '2026-01-25' }], resumesOn: '2026-01-26' }, settings);
      assert.deepEqual(soon?.step, { kind: 'reminder', reminderNumber: 2, date: '2026-02-04', demandLetter: false });
    });
  });
});
